package core

import "github.com/bulwark-go/bulwark/internal/mono"

// OnShadowBlock calls fn with every entry that a shadow rule (a rule with
// Shadow set) would have blocked and let through: fn gets the error the
// rule would have returned. It runs synchronously on the entering
// goroutine, so it must be quick; the error is shared by every call for the
// rule (only a system rule's is made per call, and only while some fn
// listens), and must not be changed. The engine counts shadow blocks
// without any fn: see Figures.ShadowBlocked. cancel stops the calls.
func (e *Engine) OnShadowBlock(fn func(*BlockError)) (cancel func()) {
	return e.shadowLn.Add(fn)
}

// shadowBlocked records that b's shadow rule would have blocked en: counted
// per resource and kind, and told to the listeners, without allocating.
func (e *Engine) shadowBlocked(en *Entry, now mono.Time, b *BlockError) {
	if en.stats != nil {
		en.stats.addShadow(now, b.Kind, en.count)
	}
	for _, fn := range e.shadowLn.List() {
		fn(b)
	}
}
