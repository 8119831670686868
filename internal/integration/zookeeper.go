package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testcontainers/testcontainers-go"
)

// EnvZooKeeperClasspath overrides the class path used in local mode.
const EnvZooKeeperClasspath = "BULWARK_IT_ZOOKEEPER_CLASSPATH"

const debianZooKeeperClasspath = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"

// StartZooKeeper starts a standalone ZooKeeper server for t, running until t's cleanup,
// and returns when it serves sessions (its srvr command reports a Mode; ruok answers
// earlier than that). Digest ACLs need nothing from the server: use zk.Conn.AddAuth.
// tickTime is 500 ms; session timeouts from 1 s to 60 s are granted as asked.
//
// Local mode runs java (BULWARK_IT_JAVA, else from PATH) with ZooKeeperServerMain from
// Debian's libzookeeper-java jars (BULWARK_IT_ZOOKEEPER_CLASSPATH overrides the class
// path); docker mode uses BULWARK_IT_IMAGE_ZOOKEEPER (default DefaultZooKeeperImage).
func StartZooKeeper(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := buildOptions(t, opts)
	if o.tls || len(o.redisArgs) > 0 {
		t.Fatal("StartZooKeeper: WithTLS and WithRedisArgs are not supported")
	}
	image := envOr(EnvImageZooKeeper, DefaultZooKeeperImage)
	mode := chooseMode(t, image)
	ready := zkReady

	if mode == ModeDocker {
		// Debian's jars when present (the image of .ci/image.sh), else the official
		// image's zkServer.sh.
		script := `set -e
mkdir -p /tmp/zk-data
if [ -f /usr/share/java/zookeeper.jar ]; then
	exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.jmx.log4j.disable=true \
		-cp ` + debianZooKeeperClasspath + ` org.apache.zookeeper.server.ZooKeeperServerMain /tmp/bulwark-zoo.cfg
fi
export SERVER_JVMFLAGS="-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
exec zkServer.sh start-foreground /tmp/bulwark-zoo.cfg
`
		spec := containerSpec{
			kind: "zookeeper", image: image, imageEnv: EnvImageZooKeeper, port: 2181,
			entrypoint: []string{"/bin/sh", "/tmp/bulwark-zk.sh"},
			files: []testcontainers.ContainerFile{
				{Reader: strings.NewReader(zooCfg("0.0.0.0", 2181, "/tmp/zk-data")), ContainerFilePath: "/tmp/bulwark-zoo.cfg", FileMode: 0o644},
				{Reader: strings.NewReader(script), ContainerFilePath: "/tmp/bulwark-zk.sh", FileMode: 0o755},
			},
			ready: ready,
		}
		b, addr := startContainer(t, spec)
		return newServer(t, "zookeeper", ModeDocker, addr, nil, b)
	}

	java := os.Getenv("BULWARK_IT_JAVA")
	if java == "" {
		var err error
		if java, err = exec.LookPath("java"); err != nil {
			unavailable(t, "zookeeper in local mode: java not found in PATH; install a JRE and ZooKeeper's jars "+
				"(apt-get install -y --no-install-recommends openjdk-17-jre-headless libzookeeper-java, or .ci/deps.sh) or set %s=docker", EnvMode)
		}
	}
	cp := os.Getenv(EnvZooKeeperClasspath)
	if cp == "" {
		cp = debianZooKeeperClasspath
		if _, err := os.Stat("/usr/share/java/zookeeper.jar"); err != nil {
			unavailable(t, "zookeeper in local mode: /usr/share/java/zookeeper.jar not found; install it "+
				"(apt-get install -y --no-install-recommends libzookeeper-java, or .ci/deps.sh), set %s, or set %s=docker",
				EnvZooKeeperClasspath, EnvMode)
		}
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfg, []byte(zooCfg("127.0.0.1", port, filepath.Join(dir, "data"))), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &process{
		name: "zookeeper",
		argv: []string{java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dzookeeper.jmx.log4j.disable=true", "-cp", cp,
			"org.apache.zookeeper.server.ZooKeeperServerMain", cfg},
		dir:     dir,
		logPath: filepath.Join(dir, "zookeeper.log"),
	}
	return startProcess(t, "zookeeper", p, port, nil, ready)
}

func zooCfg(bind string, port int, dataDir string) string {
	return fmt.Sprintf(`tickTime=500
initLimit=10
syncLimit=5
minSessionTimeout=1000
maxSessionTimeout=60000
clientPort=%d
clientPortAddress=%s
dataDir=%s
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,mntr,stat
`, port, bind, dataDir)
}

// zkReady asks srvr and wants a Mode line: ruok answers imok before sessions are served.
func zkReady(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return err
	}
	sc := bufio.NewScanner(conn)
	var got []string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Mode:") {
			return nil
		}
		got = append(got, line)
	}
	return fmt.Errorf("srvr shows no Mode line: %q", strings.Join(got, " | "))
}
