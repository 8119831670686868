package file

// ReadCount returns how many times s.Read was called (by anyone: the
// Readable, Watch, Write).
func ReadCount(s *Source) int64 { return s.reads.Load() }

// WithPerm, WithDebounce and WithLockPath let tests set a new file's
// permission bits, Watch's debounce and Write's lock file.
var (
	WithPerm     = withPerm
	WithDebounce = withDebounce
	WithLockPath = withLockPath
)
