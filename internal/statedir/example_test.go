package statedir_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bulwark-go/bulwark/internal/statedir"
)

func ExampleDir() {
	docs, err := os.MkdirTemp("", "rules")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(docs)

	state, err := statedir.Dir(docs)
	if err != nil {
		panic(err)
	}
	ignore, _ := os.ReadFile(filepath.Join(state, ".gitignore"))
	again, _ := statedir.Dir(state) // a state directory is its own
	fmt.Printf("%s %q %v\n", filepath.Base(state), ignore, again == state)
	// Output: .bulwark "*\n" true
}
