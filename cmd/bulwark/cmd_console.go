package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/bulwark-go/bulwark/internal/console"
)

func init() {
	register(&command{
		name: "console", args: "--source URL [--source URL…] | passwd NAME",
		summary: "serve the fleet rule console: instances, fleet statistics, signed-in rule edits",
		help: `Serves a web console (its page is embedded: it works offline) over the rule
documents named by --source: every instance registered beside them (or named
with --instances), their statistics summed per resource, and the rules, which
editors change through a form, a review of the diff and a compare-and-set
write recorded in the history with their name.

Nobody writes anonymously: people sign in with a password from the users
file (--users; add one with "bulwark console passwd NAME"), or through a
proxy that signs them in and names them in --auth-header. Roles: viewer
(sees everything) and editor (also changes rules).

  bulwark console passwd --role editor alice     # asks for alice's password
  bulwark console --source file://rules.json --listen 127.0.0.1:8719`,
		run: runConsole,
	})
}

const defaultUsersFile = "bulwark-console.users"

// consoleOptions are the flags of bulwark console.
type consoleOptions struct {
	listen, users, authHeader string
	sources, instances        listFlag
	canary                    listFlag
	fetchTimeout              time.Duration
}

// listFlag is a flag that may be repeated and takes comma-separated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

func runConsole(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "passwd" {
		return runConsolePasswd(e, args[1:])
	}
	var o options
	var co consoleOptions
	c := commands["console"]
	fs := newFlags(c)
	connFlags(fs, &o)
	consoleFlags(fs, &co)
	fs.StringVar(&co.listen, "listen", "127.0.0.1:8719", "address to serve on")
	fs.StringVar(&co.authHeader, "auth-header", "", "trust this header (X-Forwarded-User) to name the signed-in user: only behind a proxy that sets it")
	fs.Var(&co.sources, "source", "a rule document (repeat, or comma-separate): file://, etcd://, redis://, zk://, nacos://")
	fs.Var(&co.instances, "instances", "admin page URLs of instances to show besides the registered ones (comma-separated)")
	fs.Var(&co.canary, "canary", "canary groups (datasource.WithOverlay) to show and write, besides those the center lists (comma-separated)")
	fs.DurationVar(&co.fetchTimeout, "instance-timeout", time.Second, "give up on an instance's admin page (or a registry) after this long")
	if _, err := parse(e, c, fs, args, 0, 0); err != nil {
		return err
	}
	if len(co.sources) == 0 && len(co.instances) == 0 {
		return failf(exitUsage, "want at least one --source or --instances (see bulwark console --help)")
	}
	if _, err := os.Stat(co.users); err != nil && co.authHeader == "" {
		return failf(exitUsage, "users file %s: %v: add a user first (bulwark console passwd --users %s NAME), or sign in through a proxy (--auth-header)", co.users, err, co.users)
	}
	var docs []console.Document
	for _, raw := range co.sources {
		ctr, err := openCenter(ctx, raw, &o)
		if err != nil {
			return err
		}
		defer ctr.Close()
		docs = append(docs, console.Document{Center: ctr})
	}
	log := slog.New(slog.DiscardHandler)
	if o.verbose { // -v (connFlags): the console's writes and failures, and the clients' log lines
		log = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	srv := console.New(docs, console.WithUsersFile(co.users), console.WithAuthHeader(co.authHeader),
		console.WithInstances(co.instances...), console.WithCanaryGroups(co.canary...), console.WithFetchTimeout(co.fetchTimeout), console.WithLogger(log))
	defer srv.Close()
	ln, err := net.Listen("tcp", co.listen)
	if err != nil {
		return fail(exitUsage, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "bulwark console on http://%s/ (documents: %d; Ctrl-C to stop)\n", ln.Addr(), len(docs))
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fail(exitUnreachable, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	<-done
	return nil
}

func consoleFlags(fs *flag.FlagSet, co *consoleOptions) {
	fs.StringVar(&co.users, "users", defaultUsersFile, "the users file: NAME:ROLE:BCRYPT-HASH lines, written by bulwark console passwd")
}

// runConsolePasswd adds a user to the users file, or changes its role and
// password. The password is read from the terminal without echo, else
// from the first line of stdin.
func runConsolePasswd(e *env, args []string) error {
	c := &command{name: "console passwd", args: "[--users FILE] [--role viewer|editor] NAME",
		help: `Adds NAME to the users file, or changes its role and password. The password
is asked for on the terminal (not echoed), or read from the first line of
stdin; only its bcrypt hash is stored. An empty password stores none: NAME
then signs in only through the proxy header (--auth-header), with this role.`}
	var co consoleOptions
	var role string
	fs := newFlags(c)
	consoleFlags(fs, &co)
	fs.StringVar(&role, "role", console.RoleViewer, "viewer (sees everything) or editor (also changes rules)")
	pos, err := parse(e, c, fs, args, 1, 1)
	if err != nil {
		return err
	}
	var pw []byte
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(e.stderr, "password for %s: ", pos[0])
		pw, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
	} else {
		var line string
		line, err = bufio.NewReader(e.stdin).ReadString('\n')
		if errors.Is(err, io.EOF) {
			err = nil
		}
		pw = []byte(strings.TrimRight(line, "\r\n"))
	}
	if err != nil {
		return fail(exitUsage, fmt.Errorf("read the password: %w", err))
	}
	if err := console.SetUser(co.users, pos[0], role, pw); err != nil {
		return fail(exitUsage, err)
	}
	fmt.Fprintf(e.stdout, "%s: %s, role %s\n", co.users, pos[0], role)
	return nil
}
