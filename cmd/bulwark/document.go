package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bulwark-go/bulwark/converter"
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
func pickKind(o *options, data []byte, name string) (*kind, error) {
	if o.kind != "" {
		return kindNamed(o.kind)
	}
	return detect(data, hintFrom(filepath.Base(name))), nil
}

// rulesOf decodes a document of kind k into canonical rules; a missing
// document has none.
func rulesOf(k *kind, data []byte, missing bool) ([]rule, error) {
	if missing {
		return nil, nil
	}
	canon, _, err := k.codec.canonical(data)
	if err != nil {
		return nil, err
	}
	return parseRules(k, canon)
}

// finding is one problem or warning, as validate reports it.
type finding struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"` // "error" or "warning"
	Rule     *int   `json:"rule,omitempty"`
	Resource string `json:"resource,omitempty"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
	Text     string `json:"text"` // the line validate prints
}

// findings lists the problems of err and the warnings of a document.
func findings(name string, err error, warns []converter.Problem) []finding {
	var out []finding
	var de *converter.DecodeError
	switch {
	case errors.As(err, &de):
		for _, p := range de.Problems {
			out = append(out, findingOf(name, p, "error"))
		}
	case err != nil:
		out = append(out, finding{File: name, Severity: "error", Message: err.Error(), Text: name + ": " + err.Error()})
	}
	for _, p := range warns {
		out = append(out, findingOf(name, p, "warning"))
	}
	return out
}

func findingOf(name string, p converter.Problem, severity string) finding {
	f := finding{File: name, Line: p.Line, Column: p.Column, Severity: severity, Resource: p.Resource, Path: p.Path, Message: p.Message}
	if p.Rule >= 0 {
		r := p.Rule
		f.Rule = &r
	}
	msg := p.Error()
	if p.Line > 0 {
		// A problem of the whole document starts with its position already.
		msg = strings.TrimPrefix(msg, fmt.Sprintf("%d:%d: ", p.Line, p.Column))
	}
	if severity == "warning" {
		msg = "warning: " + msg
	}
	pos := name + ":"
	if p.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d:", name, p.Line, p.Column)
	}
	f.Text = pos + " " + msg
	return f
}

// printFindings prints findings one a line, or as a JSON array.
func printFindings(w io.Writer, fs []finding, asJSON bool) {
	if asJSON {
		if fs == nil {
			fs = []finding{}
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
