package paramvalue_test

import (
	"fmt"

	"github.com/bulwark-go/bulwark/internal/paramvalue"
)

func ExampleParse() {
	for _, item := range [][2]string{{"42", "long"}, {"0.5", "double"}, {"TRUE", "boolean"}, {"a", "char"}, {"VIP", ""}, {"300", "byte"}} {
		v, err := paramvalue.Parse(item[0], item[1])
		fmt.Printf("%T %v %v\n", v, v, err)
	}
	// Output:
	// int64 42 <nil>
	// float64 0.5 <nil>
	// bool true <nil>
	// int32 97 <nil>
	// string VIP <nil>
	// <nil> <nil> "300" is not a 8-bit integer (byte)
}
