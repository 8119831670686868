// Package datasourcetest is a conformance suite for datasource backends,
// in the spirit of testing/slogtest: a backend's test describes how to make
// a fresh document and change it behind the Source's back, and [Run] checks
// everything the datasource framework relies on against a real instance.
//
//	func TestConformance(t *testing.T) {
//		datasourcetest.Run(t, datasourcetest.Harness{
//			New: func(t *testing.T) datasourcetest.Backend {
//				key := "/bulwark-test/" + t.Name()
//				return datasourcetest.Backend{
//					Source: etcd.New(cli, key),
//					Put:    func(ctx context.Context, b []byte) error { _, err := other.Put(ctx, key, string(b)); return err },
//					Delete: func(ctx context.Context) error { _, err := other.Delete(ctx, key); return err },
//					Fault:  &datasourcetest.Fault{Disconnect: proxy.Stop, Reconnect: proxy.Start},
//				}
//			},
//		})
//	}
//
// The cases (subtests of Run):
//
//   - FirstReadPresent, FirstReadMissing: Start applies the document, or the
//     zero value for a missing one, before it returns; Status says so.
//   - UpdateThroughWatch (Watchers only: polling and reconciling are made
//     an hour apart), UpdateThroughPoll (the Watcher hidden), BurstLatestWins.
//   - BurstCreateDelete, BurstRevert (Watchers only; polling and
//     reconciling off, so a lost push stays lost): Harness.BurstRounds
//     rounds (default 300) of "create, delete" and of "A → B → A", each
//     round's writes back to back through Put and Delete. After each round
//     the suite reads the document the backend holds through the Source and
//     waits, up to Harness.BurstSettle (2 s), for the rules and Status to
//     show it (missing and no rules, or A at the revision read); then it
//     reads the backend again and waits again, so that a stale read landing
//     after the first match is caught too. Any round that does not get
//     there is lost; the case logs the rounds, the losses and its wall
//     time, and fails naming every lost round.
//   - EmptyDocumentClears, DeleteClears, DeleteKeptWithOption, Recreate.
//   - UndecodableKeepsLastGood, InvalidKeepsLastGood: a rejected document
//     leaves the running rules, Status.Err names it and Failures counts.
//   - UndecodableReplaced (Sinks only): Writable.Read and Update report a
//     document that does not decode as a *datasource.DecodeError with its
//     revision and content; Update does not call its function nor write; a
//     Write at a revision read before the document broke is a conflict; a
//     Write at the broken revision repairs it, and the Readable applies it.
//   - WriteRoundTrip, WriteCreate, WriteConflict, SinkConflictOneWinner,
//     UpdateConcurrentLosesNothing, SharedWritableKeepsEdits (Sinks only):
//     compare-and-set works against the revision the caller read (a stale
//     one, "" over an existing document, another client's edit are
//     conflicts), one of several writers at a revision wins, nothing is
//     lost, and one Writable shared by goroutines never writes one's value
//     over another's Update.
//   - CloseWaitsNoLeak: Close is idempotent, leaves no goroutine (goleak),
//     and nothing is applied after it.
//   - CloseStopsWatch (Watchers only): a Watch started directly runs (a
//     change reaches it); Source.Close makes it return an error wrapping
//     ErrClosed while its context goes on, within Harness.Timeout; then
//     Read, Watch and Write (Sinks) return ErrClosed, and Close again
//     returns nil.
//   - ReconnectResync (with a Fault hook): changes made while the Source was
//     cut off are read after it reconnects, and watching resumes.
//   - OverlayReplacesBase (with Backend.Overlay): a Readable with
//     datasource.WithOverlay follows the overlay while it exists, the base
//     otherwise.
//   - OverlaysListed (Sources with an Overlays(ctx) ([]string, error)
//     method, and Backend.Overlay): Overlays lists the groups whose overlay
//     exists, sorted, also while the document itself does not, and leaves
//     out names that only share the prefix (no group after it, a rest that
//     cannot be a group, another document's overlay). A server that cannot
//     list must say so (an error wrapping errors.ErrUnsupported) every
//     time, also with an overlay in place, never answering with a list
//     that leaves it out.
//   - CallsCutShortByContext: Read, Instances (a Registry) and Overlays
//     (a lister) with contexts that end before, during and after the
//     exchange, hundreds of times: each returns what is there or fails
//     because its context ended; the Source answers afterwards, and Close
//     waits for what was left behind. Under -race it catches a call run
//     aside that writes what its caller reads after returning early.
//   - DeleteCompareAndSet (Sources with a Delete(ctx, expectRevision)
//     method): a stale revision is a conflict and removes nothing; the
//     current one removes the document, and a Readable on it sees the rules
//     cleared; deleting again, and deleting at "" (any revision), are not
//     errors; a closed Source refuses with ErrClosed.
//   - RegisterListed, BeatKeepsIt, CloseUnregisters, StoppedBeatExpires,
//     RegistryClosed (Sources that are a datasource.Registry; instances beat
//     every Harness.BeatInterval, default 200 ms): Instances lists what
//     Register wrote, sorted, fresh; bad and duplicate IDs are refused;
//     beats keep a record for longer than MissedBeats intervals; Close
//     removes it; a record whose beats stop without Close (a crash)
//     expires or is listed Stale (and, with Harness.RecordExpiry, is
//     removed by the backend); closing the Source ends its
//     registrations (goleak) and Register and Instances then return
//     ErrClosed.
//
// Documents are JSON arrays of strings, so the suite needs no rule types;
// a stand-in rule manager rejects the rule "invalid". Waits poll a
// condition up to Harness.Timeout; nothing asserts timing.
//
// The contract does not promise read-after-write, so the suite runs
// against eventually consistent backends too: after a write through the
// Sink, a case reads until the write shows (a read that still returns the
// replaced document is stale, not a failure), then asserts what it reads.
package datasourcetest
