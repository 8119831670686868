package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// Exit codes, documented in the package comment and in usage.
const (
	exitOK          = 0
	exitInvalid     = 1 // an invalid document, or differences found (diff)
	exitUsage       = 2 // bad command line, or a change not confirmed
	exitConflict    = 3 // the document changed since it was read: nothing written
	exitUnreachable = 4 // the config center did not answer, or refused the request
)

// exitError carries the exit code of a failed command. A nil err means the
// command already said everything it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func fail(code int, err error) error { return &exitError{code: code, err: err} }

func failf(code int, format string, args ...any) error {
	return fail(code, fmt.Errorf(format, args...))
}

// silent is the exit code alone: the command printed its findings.
func silent(code int) error { return &exitError{code: code} }

var errHelp = errors.New("help shown")

// report prints err for command name and returns the exit code it stands for.
func report(w io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	code := codeOf(err)
	var ee *exitError
	if errors.As(err, &ee) && ee.err == nil {
		return code
	}
	fmt.Fprintf(w, "bulwark %s: %v\n", name, err)
	return code
}

// codeOf is the exit code err stands for: an exitError's, else the one of
// its class (package rulechange).
func codeOf(err error) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, datasource.ErrConflict):
		return exitConflict
	case errors.Is(err, rulechange.ErrUnreachable):
		return exitUnreachable
	case errors.Is(err, rulechange.ErrArgument):
		return exitUsage
	}
	return exitInvalid
}

// options are the flags commands share; each command registers those it
// takes.
type options struct {
	timeout          time.Duration
	json             bool
	kind             string
	user, password   string
	tls              bool
	caFile, certFile string
	keyFile          string
	author           string
	yes, dryRun      bool
	historyBytes     int
}

// connFlags are the flags of every command that talks to a config center.
func connFlags(fs *flag.FlagSet, o *options) {
	fs.DurationVar(&o.timeout, "timeout", defaultTimeout, "give up on an unreachable config center after this long (exit 4)")
	fs.StringVar(&o.user, "user", os.Getenv("BULWARK_USER"), "user name (etcd, Redis ACL, Nacos; ZooKeeper digest); env BULWARK_USER")
	fs.StringVar(&o.password, "password", "", "password; env BULWARK_PASSWORD (preferred: flags show in process lists)")
	fs.BoolVar(&o.tls, "tls", os.Getenv("BULWARK_TLS_CA") != "" || os.Getenv("BULWARK_TLS_CERT") != "", "connect with TLS (etcd, Redis, Nacos)")
	fs.StringVar(&o.caFile, "cacert", os.Getenv("BULWARK_TLS_CA"), "PEM file of the CA that signed the server's certificate; env BULWARK_TLS_CA")
	fs.StringVar(&o.certFile, "cert", os.Getenv("BULWARK_TLS_CERT"), "PEM client certificate; env BULWARK_TLS_CERT")
	fs.StringVar(&o.keyFile, "key", os.Getenv("BULWARK_TLS_KEY"), "PEM client key; env BULWARK_TLS_KEY")
}

func kindFlag(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.kind, "kind", "", "rule kind: flow, degrade, system, authority, paramFlow or ruleset (default: detected from the document)")
}

func jsonFlag(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.json, "json", false, "print JSON for scripts")
}

// changeFlags are the flags of the commands that write (apply, edit, set,
// rollback).
func changeFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.author, "author", defaultAuthor(), "who makes the change, recorded in the history; env BULWARK_AUTHOR")
	fs.BoolVar(&o.yes, "yes", false, "do not ask for confirmation")
	fs.BoolVar(&o.dryRun, "dry-run", false, "show the changes and stop: write nothing")
	fs.IntVar(&o.historyBytes, "history-bytes", rulechange.DefaultHistoryBytes, "largest history document; the oldest entries go first")
}

// conn are the connection options of the flags.
func (o *options) conn() rulechange.Options {
	return rulechange.Options{Timeout: o.timeout, User: o.user, Password: o.password,
		TLS: o.tls, CAFile: o.caFile, CertFile: o.certFile, KeyFile: o.keyFile}
}

// openCenter connects to the source raw.
func openCenter(ctx context.Context, raw string, o *options) (*rulechange.Center, error) {
	return rulechange.Open(ctx, raw, o.conn())
}

func defaultAuthor() string {
	if a := os.Getenv("BULWARK_AUTHOR"); a != "" {
		return a
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	if host == "" {
		return name
	}
	return name + "@" + host
}

// newFlags returns the flag set of command c; errors are printed by parse.
func newFlags(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args, flags anywhere among the arguments ("apply SRC FILE
// --yes" works), and checks the count of positional arguments against
// [min, max] (max < 0: no bound). --help prints the command's usage.
func parse(e *env, c *command, fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				commandUsage(e.stdout, c, fs)
				return nil, errHelp
			}
			return nil, failf(exitUsage, "%v (see bulwark %s --help)", err, c.name)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		return nil, failf(exitUsage, "usage: bulwark %s %s (see bulwark %s --help)", c.name, c.args, c.name)
	}
	if o := fs.Lookup("password"); o != nil && o.Value.String() == "" {
		_ = fs.Set("password", os.Getenv("BULWARK_PASSWORD"))
	}
	return pos, nil
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: bulwark %s %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.help))
	fmt.Fprintln(w, "\nFlags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// colorOn says whether f is a terminal that takes colours.
func colorOn(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (e *env) paint(code, s string) string {
	if !e.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

const defaultTimeout = rulechange.DefaultTimeout
