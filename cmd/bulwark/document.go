package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// readInput reads a file, or standard input for "-".
func readInput(e *env, name string) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fail(exitUsage, err)
	}
	return b, nil
}

// pickKind is the --kind given, else the kind detected in data (hint: the
// key or file name).
func pickKind(o *options, data []byte, name string) (*rulechange.Kind, error) {
	return rulechange.PickKind(o.kind, data, name)
}

// printFindings prints findings one a line, or as a JSON array.
func printFindings(w io.Writer, fs []rulechange.Finding, asJSON bool) {
	if asJSON {
		if fs == nil {
			fs = []rulechange.Finding{}
		}
		writeJSON(w, fs)
		return
	}
	for _, f := range fs {
		fmt.Fprintln(w, f.Text)
	}
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// confirm asks question on stderr and reads the answer from stdin; an
// interrupt (ctx) is a no.
func confirm(ctx context.Context, e *env, question string) bool {
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	if e.in == nil {
		e.in = bufio.NewReader(e.stdin)
	}
	answer := make(chan string, 1)
	go func() { // ends with the line, or with the process
		line, _ := e.in.ReadString('\n')
		answer <- line
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(e.stderr)
		return false
	case line := <-answer:
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true
		}
		return false
	}
}

// mustBeValid prints the problems of an invalid document and returns exit
// code 1.
func mustBeValid(e *env, k *rulechange.Kind, name string, data []byte) error {
	_, fs, err := k.Check(name, data)
	printFindings(e.stderr, fs, false)
	if err != nil {
		return failf(exitInvalid, "%s is not a valid %s document: nothing written", name, k.Name())
	}
	return nil
}

// printDecodeProblems prints the findings of the converter's error in err,
// if any, as problems of the document name.
func printDecodeProblems(e *env, name string, err error) {
	var de *converter.DecodeError
	if errors.As(err, &de) {
		printFindings(e.stderr, rulechange.Findings(name, de, nil), false)
	}
}
