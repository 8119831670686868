package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// bin is the bulwark binary the tests run, as a user would.
var bin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bulwark-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "bulwark")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building bulwark:", err)
		return 1
	}
	code := m.Run()
	// Every goroutine the tests started (servers, clients, process
	// waiters) has ended. Not ours: the idle HTTP connections docker mode
	// keeps to the daemon, and the harness's thread that starts local
	// servers (locked for Pdeathsig; it lives as long as the binary), and
	// the log rotation of the Nacos SDK the canary test's instances use
	// in this process (started once, it is never stopped).
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/internal/integration.init.func3.1"),
			goleak.IgnoreAnyFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

// result is what one run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs bulwark with args, stdin and extra environment variables
// ("NAME=value"), and returns its output and exit code.
func cli(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	p := start(t, env, args...)
	if stdin != "" {
		_, err := io.WriteString(p.stdin, stdin)
		require.NoError(t, err)
	}
	require.NoError(t, p.stdin.Close())
	return p.wait(t)
}

// bulwark is cli without stdin nor environment.
func bulwark(t *testing.T, args ...string) result {
	t.Helper()
	return cli(t, "", nil, args...)
}

// proc is a running bulwark.
type proc struct {
	cmd         *exec.Cmd
	stdin       io.WriteCloser
	out, errOut *syncBuffer
	done        chan struct{}
	err         error
}

func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return launch(t, false, env, args...)
}

// startTTY is start with a terminal for stdin, as a person at a shell has:
// what is written to p.stdin is typed at it.
func startTTY(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return launch(t, true, env, args...)
}

// tty runs bulwark at a terminal where typed is typed.
func tty(t *testing.T, typed string, env []string, args ...string) result {
	t.Helper()
	p := startTTY(t, env, args...)
	if typed != "" {
		_, err := io.WriteString(p.stdin, typed)
		require.NoError(t, err)
	}
	r := p.wait(t)
	require.NoError(t, p.stdin.Close())
	return r
}

func launch(t *testing.T, terminal bool, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "BULWARK_AUTHOR=", "BULWARK_USER=", "BULWARK_PASSWORD=")
	// A binary built with -race sleeps a second at exit (so that other
	// threads may report); these exit at once. A race still exits 66.
	cmd.Env = append(cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Env = append(cmd.Env, env...)
	p := &proc{cmd: cmd, out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	var err error
	var slave *os.File
	if terminal {
		var master *os.File
		master, slave = openPTY(t)
		cmd.Stdin, p.stdin = slave, master
	} else {
		p.stdin, err = cmd.StdinPipe()
		require.NoError(t, err)
	}
	require.NoError(t, cmd.Start())
	if slave != nil {
		require.NoError(t, slave.Close()) // the child has it
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit (at most two minutes).
func (p *proc) wait(t *testing.T) result {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("bulwark %s did not exit\nstdout:\n%s\nstderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.out, p.errOut)
	}
	r := result{stdout: p.out.String(), stderr: p.errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(p.err, &ee):
		r.code = ee.ExitCode()
	case p.err != nil:
		t.Fatalf("bulwark: %v", p.err)
	}
	return r
}

// interrupt sends SIGINT, as Ctrl-C does.
func (p *proc) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// openPTY opens a pseudo-terminal (Linux): the master, where a test types,
// and the slave, a child's stdin. Echo is off: nothing comes back.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	fd := int(master.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	require.NoError(t, err)
	tio.Lflag &^= unix.ECHO
	require.NoError(t, unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, tio))
	t.Cleanup(func() { _ = master.Close() })
	return master, slave
}
