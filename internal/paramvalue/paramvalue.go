package paramvalue

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse returns object, a value written as text, as a Go value according
// to classType, a Java type name:
//
//	int, long, short, byte (and java.lang.Integer, Long, Short, Byte)  int64, within the Java type's range
//	double, float (and java.lang.Double, Float)                       float64
//	boolean (and java.lang.Boolean)                                    bool, from "true" or "false" in any case
//	char (and java.lang.Character)                                     rune, object must be one character
//	String, java.lang.String, or empty                                 string, object as is
//
// Java reads an unknown class type as a string and takes the first
// character of a longer char; Parse rejects both.
func Parse(object, classType string) (any, error) {
	s := object
	integer := func(bits int) (any, error) {
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a %d-bit integer (%s)", s, bits, classType)
		}
		return v, nil
	}
	switch classType {
	case "", "String", "java.lang.String":
		return s, nil
	case "int", "java.lang.Integer":
		return integer(32)
	case "long", "java.lang.Long":
		return integer(64)
	case "short", "java.lang.Short":
		return integer(16)
	case "byte", "java.lang.Byte":
		return integer(8)
	case "double", "java.lang.Double", "float", "java.lang.Float":
		bits := 64
		if classType == "float" || classType == "java.lang.Float" {
			bits = 32
		}
		v, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number (%s)", s, classType)
		}
		return v, nil
	case "boolean", "java.lang.Boolean":
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false (%s)", s, classType)
	case "char", "java.lang.Character":
		if r, n := utf8.DecodeRuneInString(s); n == len(s) && n > 0 && r != utf8.RuneError {
			return r, nil
		}
		return nil, fmt.Errorf("%q is not one character (%s)", s, classType)
	}
	return nil, fmt.Errorf("unknown class type %q: use int, long, double, float, byte, short, boolean, char, String or a java.lang name", classType)
}
