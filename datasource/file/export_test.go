package file

// ReadCount returns how many times s.Read was called (by anyone: the
// Readable, Watch, Write).
func ReadCount(s *Source) int64 { return s.reads.Load() }

// WithPerm and WithDebounce let tests set a new file's permission bits and
// Watch's debounce.
var (
	WithPerm     = withPerm
	WithDebounce = withDebounce
)
