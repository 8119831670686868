package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "edit", args: "SOURCE", summary: "edit the document in $EDITOR, validated on save, written with compare-and-set",
		help: `Opens the document in $VISUAL or $EDITOR (default vi). When the editor exits,
the document is validated: on a problem the problems are printed and the
editor opens again (saving the same text again gives up, exit 1). Then the
diff is shown, confirmed (--yes skips it) and written with compare-and-set
against the revision read: when someone changed the document meanwhile,
nothing is written, the exit code is 3, and the edited text is kept in a
file named in the message. Recorded in the history.`,
		run: runEdit,
	})
}

func runEdit(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["edit"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	changeFlags(fs, &o)
	pos, err := parse(e, c, fs, args, 1, 1)
	if err != nil {
		return err
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	cur, err := ctr.Read(ctx)
	if err != nil {
		return err
	}
	start := cur.Data
	if cur.Missing {
		start = []byte("[]\n")
		if o.kind == "ruleset" {
			start = []byte("{}\n")
		}
	}
	dir, err := os.MkdirTemp("", "bulwark-edit-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	path := filepath.Join(dir, strings.TrimSuffix(safeName(ctr.Name()), ".json")+".json")
	if err := os.WriteFile(path, start, 0o600); err != nil {
		return err
	}
	var bad []byte // the last text that did not validate
	for {
		if err := runEditor(e, path); err != nil {
			return err
		}
		next, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Equal(next, start) {
			fmt.Fprintln(e.stdout, "no changes: nothing written")
			return nil
		}
		k, err := pickKind(&o, next, ctr.Name())
		if err != nil {
			return err
		}
		verr := mustBeValid(e, k, path, next)
		if verr == nil {
			p, err := rulechange.NewPlan(ctr, k, cur, next, "your edit", "edit")
			if err == nil {
				err = carry(ctx, e, &o, p)
			}
			if code := codeOf(err); err != nil && (code == exitConflict || code == exitUsage) {
				keep = true
				return fail(code, fmt.Errorf("%w; your edit is kept in %s", err, path))
			}
			return err
		}
		if bytes.Equal(next, bad) {
			keep = true
			return failf(exitInvalid, "the document is still invalid: nothing written; your edit is kept in %s", path)
		}
		bad = next
		fmt.Fprintln(e.stderr, "the document is not valid: opening the editor again (save it unchanged to give up)")
	}
}

// runEditor runs $VISUAL or $EDITOR (a command line, run by the shell) on path.
func runEditor(e *env, path string) error {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	// Not CommandContext: Ctrl-C in an editor is the editor's (vi ignores
	// it), it must not kill it.
	cmd := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	e.editing.Store(true)
	defer e.editing.Store(false)
	if err := cmd.Run(); err != nil {
		return failf(exitUsage, "editor %q: %v: nothing written", editor, err)
	}
	return nil
}

// safeName makes a key a file name.
func safeName(key string) string {
	s := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, strings.Trim(key, "/"))
	if s == "" {
		s = "rules"
	}
	return s
}
