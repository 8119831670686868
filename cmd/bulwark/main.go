package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
)

// command is one subcommand: its usage line, a paragraph of help, and what it
// does.
type command struct {
	name, args, summary, help string
	run                       func(ctx context.Context, e *env, args []string) error
}

// env is what a command talks to: its streams, and how to ask the user.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	color          bool // stdout is a terminal and NO_COLOR is unset
	interactive    bool // stdin is a terminal: a question can be answered
	in             *bufio.Reader
	editing        atomic.Bool // an editor runs: an interrupt is its own
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, color: colorOn(os.Stdout), interactive: isTerminal(os.Stdin)}
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sig {
			// Ctrl-C in an editor is the editor's (vi leaves insert
			// mode with it), not ours.
			if s == os.Interrupt && e.editing.Load() {
				continue
			}
			cancel()
		}
	}()
	code := run(ctx, os.Args[1:], e)
	cancel()
	os.Exit(code)
}

// run runs the command line args and returns the process's exit code.
func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				return run(ctx, []string{args[1], "--help"}, e)
			}
		}
		usage(e.stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "bulwark: unknown command %q\n\n", name)
		usage(e.stderr)
		return exitUsage
	}
	err := c.run(ctx, e, args[1:])
	return report(e.stderr, c.name, err)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `bulwark validates, reviews, applies and rolls back Sentinel rule documents
in a file, etcd, Redis, ZooKeeper, Nacos or Consul.

Usage: bulwark COMMAND [flags] ARGS

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return order(names[i]) < order(names[j]) })
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  %-9s %s\n", n, c.summary)
	}
	fmt.Fprint(w, `
Sources: PATH or file:///PATH, etcd://HOST:2379/KEY, redis://HOST:6379/KEY[?channel=&db=],
zk://HOST:2181/PATH, nacos://HOST:8848/DATAID[?group=&namespace=] (servers comma-separated),
consul://HOST:8500/KEY[?dc=&ns=] (one agent; CONSUL_HTTP_* variables apply).
Credentials: --user/--password or BULWARK_USER/BULWARK_PASSWORD (Consul: the ACL token is
--password, else CONSUL_HTTP_TOKEN); TLS: --tls, --cacert, --cert, --key or
BULWARK_TLS_CA/_CERT/_KEY. They are never printed. The config center clients'
own log lines are shown with -v only.

Writes (apply, edit, set, rollback, promote, abort) show the change, then ask
at a terminal; when standard input is not a terminal they refuse (exit 2)
unless --yes is given. --dry-run shows the change only.

Exit codes: 0 ok, 1 invalid or differences found, 2 usage or not confirmed,
3 conflict (nothing written), 4 config center unreachable.

"bulwark COMMAND --help" shows a command's flags.
`)
}

// order lists the commands in the order a user meets them.
func order(name string) int {
	i := strings.Index(" suggest validate fmt get diff apply edit set history rollback promote abort status watch console ", " "+name+" ")
	if i < 0 {
		return 1 << 20
	}
	return i
}
