package integration

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// dockerClient is the Docker client shared by the test binary, or the reason there is none.
var dockerClient = sync.OnceValues(func() (*testcontainers.DockerClient, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker daemon does not answer: %w", err)
	}
	reapStale(ctx, cli)
	return cli, nil
})

// Labels put on every container, so containers left by a test binary that was killed
// (cleanup never ran, and the reaper is usually disabled) are removed by the next one.
const (
	labelKind = "org.bulwark-go.integration"
	labelPID  = "org.bulwark-go.integration.pid"
)

// reapStale removes containers started by test binaries that no longer run.
func reapStale(ctx context.Context, cli *testcontainers.DockerClient) {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", labelPID)})
	if err != nil {
		return
	}
	for _, c := range res.Items {
		pid, err := strconv.Atoi(c.Labels[labelPID])
		if err != nil || pid <= 0 || !processGone(pid) {
			continue
		}
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
}

var imagePresent sync.Map // image name -> bool

// dockerImagePresent reports whether a Docker daemon answers and has image locally.
func dockerImagePresent(image string) bool {
	if v, ok := imagePresent.Load(image); ok {
		return v.(bool)
	}
	ok := false
	if cli, err := dockerClient(); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := cli.ImageInspect(ctx, image)
		cancel()
		ok = err == nil
	}
	imagePresent.Store(image, ok)
	return ok
}

// containerSpec describes a server container. The command must work both in the official
// image and in the plain Debian image built by .ci/image.sh.
type containerSpec struct {
	kind       string
	image      string
	imageEnv   string // the variable naming the image, for messages
	port       int    // the server's port inside the container
	entrypoint []string
	files      []testcontainers.ContainerFile
	// ready probes the server at addr (127.0.0.1:hostPort).
	ready func(ctx context.Context, addr string) error
}

// containerBackend runs a server in a container published on a fixed host port.
type containerBackend struct {
	spec containerSpec
	addr string
	cli  *testcontainers.DockerClient
	c    *testcontainers.DockerContainer
}

// startContainer starts the container with spec.port published on a free port of
// 127.0.0.1 and waits until its server is ready. It skips the test when Docker or the
// image is not available.
func startContainer(t testing.TB, spec containerSpec) (*containerBackend, string) {
	t.Helper()
	hostPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", hostPort)
	b, err := runContainer(t, spec, addr, map[int]int{spec.port: hostPort})
	if err != nil {
		t.Fatalf("start %s: %v", spec.kind, err)
	}
	return b, addr
}

// runContainer starts a container publishing each container port of publish on its host
// port of 127.0.0.1 (fixed, so addresses survive stop and start), and waits until
// spec.ready answers for addr. It skips the test when Docker or the image is not
// available; any other failure is returned, with the container's log tail, after the
// container was removed.
func runContainer(t testing.TB, spec containerSpec, addr string, publish map[int]int) (*containerBackend, error) {
	t.Helper()
	cli, err := dockerClient()
	if err != nil {
		unavailable(t, "%s in docker mode: %v; start a Docker daemon or set %s=local", spec.kind, err, EnvMode)
	}
	bindings := network.PortMap{}
	var exposed []string
	for ctrPort, hostPort := range publish {
		p := network.MustParsePort(fmt.Sprintf("%d/tcp", ctrPort))
		exposed = append(exposed, p.String())
		bindings[p] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(hostPort)}}
	}

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        spec.image,
			Entrypoint:   spec.entrypoint,
			ExposedPorts: exposed,
			Files:        spec.files,
			Labels:       map[string]string{labelKind: spec.kind, labelPID: strconv.Itoa(os.Getpid())},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = bindings
			},
		},
		Started: true,
		Logger:  tclog.TestLogger(t),
	}
	present := dockerImagePresent(spec.image)
	ctr, err := testcontainers.GenericContainer(ctx, req)
	c, _ := ctr.(*testcontainers.DockerContainer)
	if err != nil {
		if c != nil {
			return nil, closeFailed(&containerBackend{spec: spec, addr: addr, cli: cli, c: c}, err)
		}
		if !present {
			unavailable(t, "%s in docker mode: image %s is not present and could not be pulled: %v; "+
				"build a local image with .ci/image.sh and set %s=bulwark-it:bookworm, or set %s=local",
				spec.kind, spec.image, err, spec.imageEnv, EnvMode)
		}
		return nil, fmt.Errorf("container from %s: %w", spec.image, err)
	}
	b := &containerBackend{spec: spec, addr: addr, cli: cli, c: c}
	if err := b.waitReady(ctx); err != nil {
		return nil, closeFailed(b, err)
	}
	return b, nil
}

// closeFailed removes a container that failed to start and returns err with its log tail.
func closeFailed(b *containerBackend, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tail := b.logTail(ctx, 60)
	_ = b.close(ctx)
	return fmt.Errorf("%w\nserver log tail:\n%s", err, tail)
}

func (b *containerBackend) waitReady(ctx context.Context) error {
	return poll(ctx, 100*time.Millisecond, func(ctx context.Context) error {
		st, err := b.c.State(ctx)
		if err != nil {
			return fmt.Errorf("inspect container: %w", err)
		}
		if !st.Running {
			return permanentError{fmt.Errorf("container exited with code %d", st.ExitCode)}
		}
		return b.spec.ready(ctx, b.addr)
	})
}

func (b *containerBackend) start(ctx context.Context) error {
	if err := b.c.Start(ctx); err != nil {
		return err
	}
	return b.waitReady(ctx)
}

func (b *containerBackend) stop(ctx context.Context) error {
	if _, err := b.cli.ContainerKill(ctx, b.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("docker kill: %w", err)
	}
	return poll(ctx, 50*time.Millisecond, func(ctx context.Context) error {
		st, err := b.c.State(ctx)
		if err != nil {
			return err
		}
		if st.Running {
			return fmt.Errorf("container still running")
		}
		return nil
	})
}

func (b *containerBackend) pause(ctx context.Context) error {
	if _, err := b.cli.ContainerPause(ctx, b.c.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("docker pause: %w", err)
	}
	return nil
}

func (b *containerBackend) resume(ctx context.Context) error {
	if _, err := b.cli.ContainerUnpause(ctx, b.c.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("docker unpause: %w", err)
	}
	return nil
}

func (b *containerBackend) close(ctx context.Context) error {
	return b.c.Terminate(ctx, testcontainers.StopTimeout(0))
}

func (b *containerBackend) logTail(ctx context.Context, lines int) string {
	rc, err := b.c.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(no container log: %v)", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil && len(data) == 0 {
		return fmt.Sprintf("(read container log: %v)", err)
	}
	return tailLines(strings.ReplaceAll(string(data), "\r\n", "\n"), lines)
}

// processGone reports whether pid has exited (a zombie counts as gone).
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses; state follows the last ")".
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
