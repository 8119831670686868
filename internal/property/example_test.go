package property_test

import (
	"errors"
	"fmt"

	"github.com/bulwark-go/bulwark/internal/property"
)

// A listener that takes each value with where it came from, as a
// RuleManager does, and hears of a value refused before it was set.
func Example() {
	var c property.Cell[int, string]
	c.Listen(property.Listener[int, string]{
		Fn: func(v int, src string) error {
			fmt.Println("value", v, "from", src)
			return nil
		},
		Reject: func(src string, err error) { fmt.Println("refused from", src+":", err) },
	})
	_ = c.SetFrom(3, "rev 1")
	c.Reject("rev 2", errors.New("does not decode"))
	v, _ := c.Get()
	fmt.Println("still", v)
	// Output:
	// value 3 from rev 1
	// refused from rev 2: does not decode
	// still 3
}
