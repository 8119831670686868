package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Local mode for Nacos: the PolarisMesh server (a Go implementation of the Nacos config
// protocol) as a child process.
//
// Polaris' naming module always opens a UDP socket on 0.0.0.0 (no setting turns it off), so
// the server must not run in the test's network namespace unless that namespace has only a
// loopback interface. Two ways:
//
//   - the test process already runs in a loopback-only namespace (unshare -n, see
//     nacosUnshareHint): Polaris runs as a plain child on 127.0.0.1;
//   - otherwise (the usual case, root needed) the harness makes a private network namespace
//     with only loopback, starts Polaris inside it, and forwards 127.0.0.1:P and P+1000 of
//     the test's namespace to the same ports inside. Sockets toward the server are created on
//     an OS thread that has entered the private namespace (setns); a socket keeps the
//     namespace it was created in, so the copying happens on ordinary goroutines.

// Environment variables of Nacos local mode.
const (
	// EnvPolarisBin names the Polaris server binary for local mode (default:
	// DefaultPolarisBin).
	EnvPolarisBin = "BULWARK_POLARIS_BIN"
)

// PolarisVersion is the PolarisMesh release the harness runs in local mode and that
// .ci/polaris.sh builds.
const PolarisVersion = "v1.18.1"

// DefaultPolarisBin returns where .ci/polaris.sh puts the Polaris binary:
// $XDG_CACHE_HOME/bulwark/polaris-server-v1.18.1-casfix (or ~/.cache/... without
// XDG_CACHE_HOME); the suffix names the build-time fix of tools/polaris/build.sh.
func DefaultPolarisBin() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "bulwark", "polaris-server-"+PolarisVersion+"-casfix")
}

// nacosUnshareHint is how to run tests inside a loopback-only network namespace (as root;
// unshare -rn instead of -n as a user, where unprivileged user namespaces are allowed).
const nacosUnshareHint = `go mod download && go test -run '^$' ./internal/integration/ && ` +
	`unshare -n sh -c 'ip link set lo up && GOFLAGS=-mod=mod GOPROXY=off go test ./internal/integration/' ` +
	`(unshare -rn as a non-root user)`

// srcDir is this package's source directory (for testdata and the tools module).
func srcDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Dir(file)
}

// nacosLocal is a Polaris server run as a child process.
type nacosLocal struct {
	port int    // HTTP port; gRPC is port + 1000
	ns   *netns // private network namespace, nil when the test's own is loopback-only
	fwd  *proxy // forwarder from the test's namespace into ns; nil without ns
	p    *process
}

// startNacosLocal starts Polaris in local mode; it skips (or fails) the test when it cannot.
func startNacosLocal(t testing.TB) *Server {
	t.Helper()
	bin, err := polarisBinary(t)
	if err != nil {
		unavailable(t, "nacos (local mode): %v; build the server with .ci/polaris.sh "+
			"(or set %s), or use docker mode", err, EnvPolarisBin)
	}
	loOnly, err := loopbackOnly()
	if err != nil {
		t.Fatalf("nacos (local mode): %v", err)
	}

	b := &nacosLocal{}
	if !loOnly {
		b.ns, err = newNetns()
		if err != nil {
			unavailable(t, "nacos (local mode): Polaris opens a UDP socket on 0.0.0.0 that cannot be "+
				"turned off, so it runs in a private network namespace, which needs root: %v; "+
				"run the tests in a loopback-only namespace instead: %s", err, nacosUnshareHint)
		}
	}
	fail := func(err error) {
		t.Helper()
		b.shutFwd()
		if b.ns != nil {
			b.ns.close()
		}
		t.Fatalf("nacos (local mode): %v", err)
	}
	if b.ns != nil {
		if b.fwd, b.port, err = newNacosFwd(b.ns); err != nil {
			fail(err)
		}
	} else if b.port, err = freePortPair(); err != nil {
		fail(err)
	}

	dir := t.TempDir()
	conf, err := writePolarisConfig(dir, "127.0.0.1", b.port)
	if err != nil {
		fail(err)
	}
	b.p = &process{
		name:    "polaris-server",
		argv:    []string{bin, "start", "-c", conf},
		dir:     dir,
		logPath: filepath.Join(dir, "polaris-server.out"),
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := b.start(ctx); err != nil {
		failStart(t, "nacos", b, err)
	}
	if b.ns != nil {
		t.Logf("nacos (local mode): Polaris in a private network namespace, forwarded from %s and port +%d", addr, NacosGRPCPortOffset)
	} else {
		t.Logf("nacos (local mode): Polaris on %s in this loopback-only network namespace", addr)
	}
	return newServer(t, "nacos", ModeLocal, addr, nil, b)
}

func (b *nacosLocal) start(ctx context.Context) error {
	if b.fwd != nil {
		// Listen again after a stop; the ports may take a moment to be free.
		err := poll(ctx, 100*time.Millisecond, func(context.Context) error { return b.fwd.reopen() })
		if err != nil {
			return fmt.Errorf("nacos forwarder: %w", err)
		}
	}
	run := b.p.run
	if b.ns != nil {
		run = func() error { return b.ns.runProcess(b.p) }
	}
	if err := run(); err != nil {
		return err
	}
	if b.ns != nil {
		// Never let Polaris' UDP socket into the test's namespace.
		if err := b.ns.holds(b.p.cmd.Process.Pid); err != nil {
			kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = b.p.kill(kctx)
			return err
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	err := poll(ctx, 50*time.Millisecond, func(ctx context.Context) error {
		if ok, werr := b.p.exited(); ok {
			return permanentError{fmt.Errorf("polaris-server exited: %v", werr)}
		}
		return nacosReady(ctx, addr)
	})
	if err != nil {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.p.kill(kctx)
		return err
	}
	return nil
}

// stop kills the server (SIGKILL is safe: boltdb commits are durable) and, with a
// forwarder, closes its listeners so clients get connection refused.
func (b *nacosLocal) stop(ctx context.Context) error {
	b.shutFwd()
	return b.p.kill(ctx)
}

func (b *nacosLocal) pause(context.Context) error  { return b.p.signal(unix.SIGSTOP) }
func (b *nacosLocal) resume(context.Context) error { return b.p.signal(unix.SIGCONT) }

func (b *nacosLocal) close(ctx context.Context) error {
	err := b.p.kill(ctx)
	b.shutFwd()
	if b.ns != nil {
		b.ns.close()
	}
	return err
}

// logTail returns the end of Polaris' stdout (mostly its configuration) followed by the end
// of its Nacos API server log, where failed requests are explained.
func (b *nacosLocal) logTail(_ context.Context, lines int) string {
	var sb strings.Builder
	sb.WriteString(b.p.logTail(lines / 3))
	for _, name := range []string{"nacos-apiserver.log", "polaris-config-error.log", "polaris-default.log"} {
		data, err := os.ReadFile(filepath.Join(b.p.dir, "log", name))
		if err != nil || len(data) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "\n--- log/%s\n%s", name, tailLines(string(data), lines/3))
	}
	return sb.String()
}

// writePolarisConfig writes the server configuration from testdata into dir with the
// listen address filled in, and returns its path.
func writePolarisConfig(dir, ip string, port int) (string, error) {
	data, err := os.ReadFile(filepath.Join(srcDir(), "testdata", "nacos", "polaris-server.yaml"))
	if err != nil {
		return "", fmt.Errorf("read polaris config: %w", err)
	}
	conf := strings.NewReplacer(
		"${BULWARK_POLARIS_LISTEN_IP}", ip,
		"${BULWARK_POLARIS_PORT}", strconv.Itoa(port),
	).Replace(string(data))
	path := filepath.Join(dir, "polaris-server.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return "", fmt.Errorf("write polaris config: %w", err)
	}
	return path, nil
}

// polarisBinary returns the Polaris server binary, building it from the tools module
// (internal/integration/tools/polaris) into DefaultPolarisBin when it is missing.
func polarisBinary(t testing.TB) (string, error) {
	if bin := os.Getenv(EnvPolarisBin); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", EnvPolarisBin, err)
		}
		return bin, nil
	}
	bin := DefaultPolarisBin()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tools := filepath.Join(srcDir(), "tools", "polaris")
	if _, err := os.Stat(filepath.Join(tools, "go.mod")); err != nil {
		return "", fmt.Errorf("no Polaris binary at %s and no tools module to build it: %w", bin, err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("build polaris: %w", err)
	}
	// One build per machine even when several test binaries get here at once.
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("build polaris: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", fmt.Errorf("build polaris: lock: %w", err)
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	t.Logf("nacos (local mode): building Polaris %s into %s (once per machine; minutes when cold)",
		PolarisVersion, bin)
	cmd := exec.Command("bash", filepath.Join(tools, "build.sh"), bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("no Polaris binary at %s and building it failed: %w\n%s", bin, err, tailLines(string(out), 20))
	}
	return bin, nil
}

// loopbackOnly reports whether the process' network namespace has loopback interfaces only
// (as inside unshare -n). /sys/class/net is not used: it shows the namespace of whoever
// mounted sysfs.
func loopbackOnly() (bool, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return false, fmt.Errorf("list network interfaces: %w", err)
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagLoopback == 0 {
			return false, nil
		}
	}
	return true, nil
}

// freePortPair returns a port P on 127.0.0.1 such that P and P+1000 were free a moment ago
// (the Nacos SDK dials gRPC on the HTTP port + 1000).
func freePortPair() (int, error) {
	lns, err := listenSpread(0, NacosGRPCPortOffset)
	if err != nil {
		return 0, err
	}
	port := lns[0].Addr().(*net.TCPAddr).Port
	closeListeners(lns)
	return port, nil
}

// netns is a private network namespace with only a loopback interface, up. It lives as long
// as its file is open, with or without processes in it.
type netns struct {
	f *os.File // /proc/<tid>/ns/net of the thread that made it
}

// newNetns makes a network namespace and brings its loopback interface up. It needs
// CAP_SYS_ADMIN.
func newNetns() (*netns, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread is never unlocked: it ends with this goroutine, namespace and all.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("new network namespace: %w", err)}
			return
		}
		if err := loopbackUp(); err != nil {
			ch <- result{err: err}
			return
		}
		f, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			err = fmt.Errorf("open network namespace: %w", err)
		}
		ch <- result{f: f, err: err}
	}()
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	return &netns{f: r.f}, nil
}

// loopbackUp sets the loopback interface of the calling thread's namespace up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: set flags: %w", err)
	}
	return nil
}

// enter locks the calling goroutine to its thread and moves the thread into n. The thread
// must never be unlocked: it ends with the goroutine.
func (n *netns) enter() error {
	runtime.LockOSThread()
	if err := unix.Setns(int(n.f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter network namespace: %w", err)
	}
	return nil
}

// dial connects to addr inside n.
func (n *netns) dial(ctx context.Context, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		if err := n.enter(); err != nil {
			ch <- result{err: err}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// runProcess starts p inside n. It is process.run, except that the child is forked here,
// from a thread inside n (a child inherits the namespace of the thread that forks it), not
// from the shared fork thread. The forking thread stays alive until p is gone: the child's
// parent-death signal (Pdeathsig) fires when that thread ends.
func (n *netns) runProcess(p *process) error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fmt.Fprintf(logf, "=== %s: %q (private network namespace)\n", time.Now().Format(time.RFC3339Nano), p.argv)
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir = p.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		if err := n.enter(); err != nil {
			errc <- err
			return
		}
		if err := cmd.Start(); err != nil {
			errc <- fmt.Errorf("run %s: %w", p.argv[0], err)
			return
		}
		errc <- nil
		p.err = cmd.Wait()
		logf.Close()
		close(done)
	}()
	if err := <-errc; err != nil {
		logf.Close()
		return err
	}
	p.cmd, p.done = cmd, done
	return nil
}

// holds checks that process pid runs in n.
func (n *netns) holds(pid int) error {
	var want, got unix.Stat_t
	if err := unix.Fstat(int(n.f.Fd()), &want); err != nil {
		return fmt.Errorf("stat network namespace: %w", err)
	}
	if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &got); err != nil {
		return fmt.Errorf("stat network namespace of pid %d: %w", pid, err)
	}
	if want.Dev != got.Dev || want.Ino != got.Ino {
		return fmt.Errorf("pid %d runs in network namespace %d, not in the private one (%d)", pid, got.Ino, want.Ino)
	}
	return nil
}

func (n *netns) close() { n.f.Close() }

// newNacosFwd returns a proxy that forwards 127.0.0.1:P and 127.0.0.1:P+1000 of the test's
// namespace to the same ports inside ns, and P.
func newNacosFwd(ns *netns) (*proxy, int, error) {
	lns, err := listenSpread(0, NacosGRPCPortOffset)
	if err != nil {
		return nil, 0, err
	}
	targets := make([]string, len(lns))
	for i, ln := range lns {
		targets[i] = ln.Addr().String()
	}
	f := newProxy()
	f.dial = ns.dial
	f.serve(lns, targets)
	return f, lns[0].Addr().(*net.TCPAddr).Port, nil
}

// shutFwd closes the forwarder's listeners and every forwarded connection.
func (b *nacosLocal) shutFwd() {
	if b.fwd != nil {
		_ = b.fwd.stop(context.Background())
	}
}
