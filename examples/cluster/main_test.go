package main

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/integration"
)

// The test binary doubles as the example: run as a child with
// BULWARK_EXAMPLE_ARGS set, it is the command.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("BULWARK_EXAMPLE_ARGS"); ok {
		os.Args = append(os.Args[:1], strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var line = regexp.MustCompile(`^(\d\d:\d\d:\d\d)  admitted +(\d+) of +(\d+)   redis healthy$`)

// seconds collects the admitted counts two processes print, by second.
type seconds struct {
	mu   sync.Mutex
	seen map[string][]int // second → admitted, one per process that printed it
	all  []string
}

func (s *seconds) read(t *testing.T, cmd *exec.Cmd) {
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.mu.Lock()
			s.all = append(s.all, sc.Text())
			if m := line.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.Atoi(m[2])
				s.seen[m[1]] = append(s.seen[m[1]], n)
			}
			s.mu.Unlock()
		}
	}()
}

// shared counts the seconds both processes printed whose sum is within
// ±10% of limit.
func (s *seconds) shared(limit int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := 0
	for _, ns := range s.seen {
		if len(ns) == 2 && ns[0]+ns[1] >= limit*9/10 && ns[0]+ns[1] <= limit*11/10 {
			ok++
		}
	}
	return ok
}

// Two processes, each offering 100 calls/s, share a limit of 100/s.
func TestTwoProcessesShareOneLimit(t *testing.T) {
	// Redis as a cache is run: the harness's default, an fsync per write,
	// makes single requests slower than the 5 ms timeout on a busy disk.
	srv := integration.StartRedis(t, integration.WithRedisArgs("--appendfsync", "everysec"))
	s := &seconds{seen: map[string][]int{}}
	for range 2 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "BULWARK_EXAMPLE_ARGS=-addr "+srv.Addr()+" -limit 100 -rate 100 -flow 42 -timeout 200ms")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		s.read(t, cmd)
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		})
	}
	assert.Eventually(t, func() bool { return s.shared(100) >= 3 }, 20*time.Second, 50*time.Millisecond,
		"three seconds in which the two processes together admitted 100 ±10%")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.all {
		t.Log(l)
	}
}
