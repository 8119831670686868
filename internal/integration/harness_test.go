package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lifecycle drives the common controls: write, Stop (fails), Start (old data back on the
// same address), Pause (a short request fails), Resume (works again).
// write stores a value, read returns it; both use a short-lived context.
func lifecycle(t *testing.T, srv *Server, write func(ctx context.Context, v string) error, read func(ctx context.Context) (string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 1500*time.Millisecond) }
	eventually := func(what string, f func(ctx context.Context) error) {
		t.Helper()
		var last error
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			c, cc := short()
			last = f(c)
			cc()
			if last == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: still failing after 30s: %v", what, last)
	}
	addr := srv.Addr()

	c, cc := short()
	require.NoError(t, write(c, "v1"))
	cc()
	c, cc = short()
	got, err := read(c)
	cc()
	require.NoError(t, err)
	require.Equal(t, "v1", got)

	t0 := time.Now()
	require.NoError(t, srv.Stop(ctx))
	t.Logf("stop took %v", time.Since(t0))
	c, cc = short()
	_, err = read(c)
	cc()
	require.Error(t, err, "read from a stopped server")

	t0 = time.Now()
	require.NoError(t, srv.Start(ctx))
	t.Logf("start took %v", time.Since(t0))
	require.Equal(t, addr, srv.Addr(), "address after restart")
	eventually("read after restart", func(ctx context.Context) error {
		got, err := read(ctx)
		if err == nil {
			require.Equal(t, "v1", got, "data kept across restart")
		}
		return err
	})

	require.NoError(t, srv.Pause(ctx))
	c, cc = context.WithTimeout(ctx, 700*time.Millisecond)
	_, err = read(c)
	cc()
	require.Error(t, err, "read from a paused server")

	require.NoError(t, srv.Resume(ctx))
	eventually("write after resume", func(ctx context.Context) error { return write(ctx, "v2") })
	eventually("read after resume", func(ctx context.Context) error {
		got, err := read(ctx)
		if err == nil {
			require.Equal(t, "v2", got)
		}
		return err
	})
}

func TestServerStateErrors(t *testing.T) {
	srv := StartRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, srv.Start(ctx), "start of a running server is a no-op")
	require.NoError(t, srv.Resume(ctx), "resume of a running server is a no-op")
	require.NoError(t, srv.Pause(ctx))
	require.NoError(t, srv.Pause(ctx), "pause twice")
	require.NoError(t, srv.Stop(ctx), "stop of a paused server")
	require.NoError(t, srv.Stop(ctx), "stop twice")
	require.Error(t, srv.Pause(ctx), "pause of a stopped server")
	require.Error(t, srv.Resume(ctx), "resume of a stopped server")
	require.NoError(t, srv.Start(ctx))
	require.NoError(t, redisPing(ctx, srv.Addr(), nil))
}
