package redis

import (
	"context"
	"errors"
	"fmt"
	"net"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
)

// Watch SUBSCRIBEs to the channel and calls changed (with an empty
// snapshot: a hint) for every message on it, until ctx is done or the
// Source is closed (then it returns ctx.Err() or datasource.ErrClosed), or
// the subscription breaks (then it returns the cause).
//
// Once the server has confirmed the subscription, Watch reads the key and
// calls changed if the document differs from from, so a change made
// between the read of from and the subscription is not missed. A later
// subscription confirmation (a client that re-subscribed by itself after
// reconnecting) is also reported to changed, since messages published
// while it was away are lost. Any receive error other than a read timeout
// breaks the watch, and so does a PING that the server does not answer
// within the health-check interval (5 s): the
// Readable then reads the key again and calls Watch again.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	ctx, stop := s.life.WatchContext(ctx)
	defer stop()
	ps, release := s.subscribe(ctx)
	defer release()
	sub := &subscription{s: s, ps: ps, from: from, changed: changed}
	err := s.life.WatchEnded(ctx, sub.follow(ctx))
	logctx.From(ctx).Debug("redis watch ended", "channel", s.channel, "err", err)
	return err
}

// subscribe opens a PubSub (its own connection, made at its first
// command). It is closed when ctx ends, from another goroutine: that is
// how a receive blocked on the connection ends. release closes it too and
// waits for that goroutine.
func (s *Source) subscribe(ctx context.Context) (ps *goredis.PubSub, release func()) {
	ps = s.client.Subscribe(ctx)
	closed := make(chan struct{})
	stopClose := context.AfterFunc(ctx, func() {
		_ = ps.Close()
		close(closed)
	})
	return ps, func() {
		if stopClose() {
			_ = ps.Close()
		} else {
			<-closed
		}
	}
}

// subscription is one running Watch: a PubSub on the channel and what it
// has learnt of it.
type subscription struct {
	s       *Source
	ps      *goredis.PubSub
	from    datasource.Snapshot
	changed func(datasource.Snapshot)

	confirmed bool // the server confirmed SUBSCRIBE
	pinged    bool // a PING is waiting for its answer
}

// follow subscribes and handles what the subscription receives until ctx
// ends or the subscription breaks; it returns why.
func (w *subscription) follow(ctx context.Context) error {
	if err := w.ps.Subscribe(ctx, w.s.channel); err != nil {
		return fmt.Errorf("redis: subscribe %q: %w", w.s.channel, err)
	}
	logctx.From(ctx).Debug("redis watch: SUBSCRIBE sent", "channel", w.s.channel, "key", w.s.key)
	for {
		msg, err := w.ps.ReceiveTimeout(ctx, w.s.health)
		if err != nil {
			if err := w.silent(ctx, err); err != nil {
				return err
			}
			continue
		}
		w.pinged = false // the connection answered
		if err := w.receive(ctx, msg); err != nil {
			return err
		}
	}
}

// silent handles a receive that returned no message. A read timeout on a
// confirmed subscription sends a PING, unless the last one is still
// unanswered; any other error, a subscription never confirmed, and a PING
// not answered break the watch.
func (w *subscription) silent(ctx context.Context, err error) error {
	switch {
	case !isTimeout(err) || ctx.Err() != nil:
		return fmt.Errorf("redis: receive on %q: %w", w.s.channel, err)
	case !w.confirmed:
		return fmt.Errorf("redis: subscribe %q: no confirmation within %v", w.s.channel, w.s.health)
	case w.pinged:
		return fmt.Errorf("redis: subscription to %q: no answer to PING within %v", w.s.channel, w.s.health)
	}
	logctx.From(ctx).Debug("redis watch: subscription silent; PING", "channel", w.s.channel, "after", w.s.health)
	if err := w.ps.Ping(ctx); err != nil {
		return fmt.Errorf("redis: subscription to %q: ping: %w", w.s.channel, err)
	}
	w.pinged = true
	return nil
}

// receive handles one message of the subscription: a confirmation of the
// channel, a message on it (a hint), or anything else (ignored).
func (w *subscription) receive(ctx context.Context, msg any) error {
	switch m := msg.(type) {
	case *goredis.Subscription:
		if m.Kind == "subscribe" && m.Channel == w.s.channel {
			return w.confirm(ctx)
		}
		logctx.From(ctx).Debug("redis watch: ignored", "channel", w.s.channel, "kind", m.Kind, "of", m.Channel)
	case *goredis.Message:
		if m.Channel != w.s.channel {
			logctx.From(ctx).Debug("redis watch: message on another channel ignored", "channel", w.s.channel, "of", m.Channel)
			return nil
		}
		// A hint: the payload may be the document (Java Sentinel's
		// writers) or anything else; the key is the truth.
		w.changed(datasource.Snapshot{})
	case *goredis.Pong:
	}
	return nil
}

// confirm handles the server's confirmation of the subscription. From the
// first one on, every change is announced, and anything that changed
// before is in the key: it reads the key and reports a document other than
// from. A later one means go-redis re-subscribed after reconnecting, and
// what was published meanwhile is lost: it has the key read again.
func (w *subscription) confirm(ctx context.Context) error {
	if w.confirmed {
		logctx.From(ctx).Debug("redis watch: re-subscribed after a reconnect; reading the key", "channel", w.s.channel)
		w.changed(datasource.Snapshot{})
		return nil
	}
	w.confirmed = true
	logctx.From(ctx).Debug("redis watch: subscribed", "channel", w.s.channel)
	snap, err := w.s.Read(ctx)
	switch {
	case errors.Is(err, datasource.ErrTooLarge):
		// ctx carries no limit of the Readable's: let its own read decide.
		w.changed(datasource.Snapshot{})
	case err != nil:
		return err
	case snap.Missing != w.from.Missing || snap.Revision != w.from.Revision:
		w.changed(snap)
	}
	return nil
}

// isTimeout reports a read deadline that passed: no message within the
// interval, not a broken connection.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
