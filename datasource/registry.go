package datasource

import (
	"context"
	"io"
	"time"
)

// Registry is implemented by every backend's Source: services register
// themselves beside their rule document, so a console that reads the
// document finds them without a list of addresses.
//
// A registration is a record that the instance refreshes every
// Instance.Interval (a heartbeat) and that expires, in the backend's own
// way, after MissedBeats beats are missed: an etcd lease, a ZooKeeper
// ephemeral node, a Redis key with a TTL, a file beside the document, a
// Nacos config listing each instance with its last beat. A record that
// cannot expire by itself (a file; a ZooKeeper node whose session lives
// on) is reported Stale once its beats stop.
type Registry interface {
	// Register writes inst's record and keeps it fresh from a goroutine
	// until the returned Closer's Close, which stops the beats, waits for
	// the goroutine and removes the record. Closing the Source closes its
	// registrations too. Register returns an error, and starts nothing,
	// when the first record cannot be written, when inst has no ID or an
	// ID that cannot name a record (1 to 128 letters, digits, '.', '-',
	// '_', ':'), or ErrClosed once the Source is closed. A failed beat is
	// retried (with backoff, within the interval) and never ends the
	// registration.
	Register(ctx context.Context, inst Instance) (io.Closer, error)
	// Instances lists the records beside the document, sorted by ID, each
	// with Beat (when it was last refreshed) and Stale (its last MissedBeats
	// beats did not come) set. Records that have expired are left out.
	Instances(ctx context.Context) ([]Instance, error)
}

// Instance is one registered process: what Register writes and Instances
// returns.
type Instance struct {
	// ID names the record; unique among the instances of one document
	// (a host name and a port, a pod name). Required.
	ID string
	// App, Version, Addr (host:port it serves on) and AdminURL (its admin
	// page, whose JSON a console reads) describe the instance; all optional.
	App      string
	Version  string
	Addr     string
	AdminURL string
	// Interval is how often the record is refreshed: 5 s when zero. A backend may raise it to what its server allows (a TTL
	// has a minimum on some servers).
	Interval time.Duration
	// Beat is when the record was last refreshed, by the instance's clock.
	// Set by Instances; ignored by Register.
	Beat time.Time
	// Stale is set by Instances when the record's last beat is older than
	// MissedBeats intervals (by the reader's clock: clocks that disagree
	// by more than that show a live instance stale). Ignored by Register.
	Stale bool
}

// MissedBeats is how many beats a record outlives: it expires (or is
// Stale) MissedBeats intervals after its last beat.
const MissedBeats = 3
