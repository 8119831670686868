package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a server run as a child process. It is started again with the same command
// after a stop. Its output is appended to logPath.
type process struct {
	name    string   // for messages
	argv    []string // command and arguments
	dir     string   // working directory
	logPath string

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
	err  error         // Wait's result, valid after done
}

// run starts the process. It does not wait for readiness.
func (p *process) run() error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fmt.Fprintf(logf, "=== %s: %q\n", time.Now().Format(time.RFC3339Nano), p.argv)
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir = p.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Its own process group, so a stop kills every descendant; SIGKILL when the thread
	// that started it (normally: the test binary) dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startOnForkThread(cmd); err != nil {
		logf.Close()
		return fmt.Errorf("run %s: %w", p.argv[0], err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(done)
	}()
	return nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	if p.done == nil {
		return true, nil
	}
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// signal sends sig to the process group.
func (p *process) signal(sig syscall.Signal) error {
	if p.cmd == nil || p.cmd.Process == nil {
		return errors.New("not running")
	}
	if ok, _ := p.exited(); ok {
		return fmt.Errorf("%s has exited", p.name)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("signal %v: %w", sig, err)
	}
	return nil
}

// freeze stops the process group with SIGSTOP and returns once every thread of the
// process is stopped: the signal takes effect asynchronously, and a busy multi-threaded
// server (Consul) may answer one more request before it does.
func (p *process) freeze(ctx context.Context) error {
	if err := p.signal(sigStop); err != nil {
		return err
	}
	return poll(ctx, 5*time.Millisecond, func(context.Context) error {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", p.cmd.Process.Pid))
		if err != nil || len(tasks) == 0 {
			return fmt.Errorf("list the threads of %s: %v", p.name, err)
		}
		for _, task := range tasks {
			stat, err := os.ReadFile(task)
			if err != nil {
				continue // the thread ended
			}
			// pid (comm) state ...: the state follows the last ")".
			i := strings.LastIndexByte(string(stat), ')')
			if i < 0 || i+2 >= len(stat) || (stat[i+2] != 'T' && stat[i+2] != 't') {
				return fmt.Errorf("%s: a thread is not stopped yet", p.name)
			}
		}
		return nil
	})
}

// kill kills the process group with SIGKILL and waits until the process is gone.
func (p *process) kill(ctx context.Context) error {
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	// SIGKILL works on stopped processes too.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for %s to die: %w", p.name, ctx.Err())
	}
}

// logTail returns the last lines of the log file.
func (p *process) logTail(lines int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tailLines(string(data), lines)
}

// startAndWait runs the process and polls ready until it succeeds, the process exits or
// ctx ends; on failure the process is killed.
func (p *process) startAndWait(ctx context.Context, ready func(ctx context.Context) error) error {
	if err := p.run(); err != nil {
		return err
	}
	err := poll(ctx, 50*time.Millisecond, func(ctx context.Context) error {
		if ok, werr := p.exited(); ok {
			return permanentError{fmt.Errorf("%s exited: %v", p.name, werr)}
		}
		return ready(ctx)
	})
	if err != nil {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.kill(kctx)
		return err
	}
	return nil
}

const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// forkThread runs functions on one OS thread that is locked and never exits. Pdeathsig
// fires when the thread that started the child exits, not the process; Go may end a
// thread (a goroutine that exits while locked to it, as network-namespace code does), so
// children are started from this thread only. It is started on first use.
var forkThread = sync.OnceValue(func() chan<- func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the binary
		for f := range ch {
			f()
		}
	}()
	return ch
})

// startOnForkThread starts cmd from forkThread.
func startOnForkThread(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	forkThread() <- func() { errc <- cmd.Start() }
	return <-errc
}
