package file

// ReadCount returns how many times s.Read was called (by anyone: the
// Readable, Watch, Write).
func ReadCount(s *Source) int64 { return s.reads.Load() }

// WithPerm, WithDebounce, WithLockPath and WithPolling let tests set a new
// file's permission bits, Watch's debounce and Write's lock file, and
// make Watch report that notifications are not available.
var (
	WithPerm     = withPerm
	WithDebounce = withDebounce
	WithLockPath = withLockPath
	WithPolling  = withPolling
)
