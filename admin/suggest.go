package admin

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/internal/codec"
)

// Defaults and bounds of /api/suggest's parameters.
const (
	defaultPeriod = 10 * time.Minute
	defaultFactor = 1.3
	maxFactor     = 10
)

// suggestion is core.Suggestion as /api/suggest serves it.
type suggestion struct {
	From      time.Time   `json:"from"`
	To        time.Time   `json:"to"`
	Period    string      `json:"period"`
	Factor    float64     `json:"factor"`
	Resources []baseline  `json:"resources"`
	Documents suggestDocs `json:"documents"`
}

// suggestDocs are the suggested documents, ready for bulwark apply: the
// rules in force with the suggested shadow rules in place.
type suggestDocs struct {
	Flow    json.RawMessage `json:"flow"`
	Degrade json.RawMessage `json:"degrade"`
	RuleSet json.RawMessage `json:"ruleset"`
}

// baseline is core.Baseline as /api/suggest serves it.
type baseline struct {
	Resource       string          `json:"resource"`
	Seconds        int             `json:"seconds"`
	Passed         int64           `json:"passed"`
	Blocked        int64           `json:"blocked"`
	Succeeded      int64           `json:"succeeded"`
	Failed         int64           `json:"failed"`
	PeakQPS        int64           `json:"peakQps"`
	PeakAt         *time.Time      `json:"peakAt"`
	PeakErrorRatio float64         `json:"peakErrorRatio"`
	PeakAvgRTMs    float64         `json:"peakAvgRtMs"`
	Flow           json.RawMessage `json:"flow"`    // the suggested flow rules, a document
	Degrade        json.RawMessage `json:"degrade"` // the suggested breakers, a document
	Note           string          `json:"note,omitempty"`
}

// suggestParams reads period (a Go duration, at most an hour) and factor
// (1 to 10) from the query.
func suggestParams(r *http.Request) (time.Duration, float64, error) {
	period, factor := defaultPeriod, defaultFactor
	q := r.URL.Query()
	if v := q.Get("period"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Hour {
			return 0, 0, fmt.Errorf("admin: period %q: want a duration over 0 and at most 1h, such as 10m", v)
		}
		period = d
	}
	if v := q.Get("factor"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 1 || f > maxFactor {
			return 0, 0, fmt.Errorf("admin: factor %q: want a number from 1 to %d, such as 1.3", v, maxFactor)
		}
		factor = f
	}
	return period, factor, nil
}

// suggest computes the suggestion and its documents.
func suggest(e *core.Engine, period time.Duration, factor float64) (suggestion, error) {
	sg := e.Suggest(period, factor)
	out := suggestion{From: sg.From, To: sg.To, Period: period.String(), Factor: sg.Factor, Resources: make([]baseline, len(sg.Resources))}
	var err error
	if out.Documents.Flow, err = codec.EncodeCompact(converter.FlowRules(), sg.Rules.Flow); err != nil {
		return out, fmt.Errorf("admin: encode the suggested flow rules: %w", err)
	}
	if out.Documents.Degrade, err = codec.EncodeCompact(converter.CircuitBreakerRules(), sg.Rules.CircuitBreaker); err != nil {
		return out, fmt.Errorf("admin: encode the suggested circuit breakers: %w", err)
	}
	if out.Documents.RuleSet, err = codec.EncodeCompact(converter.RuleSet(), sg.Rules); err != nil {
		return out, fmt.Errorf("admin: encode the suggested rule set: %w", err)
	}
	for i, b := range sg.Resources {
		o := baseline{Resource: b.Resource, Seconds: b.Seconds, Passed: b.Passed, Blocked: b.Blocked, Succeeded: b.Succeeded,
			Failed: b.Failed, PeakQPS: b.PeakQPS, PeakErrorRatio: b.PeakErrorRatio, PeakAvgRTMs: ms(b.PeakAvgRT), Note: b.Note}
		if !b.PeakAt.IsZero() {
			o.PeakAt = &b.PeakAt
		}
		if o.Flow, err = codec.EncodeCompact(converter.FlowRules(), b.Flow); err != nil {
			return out, fmt.Errorf("admin: encode the flow rule suggested for %q: %w", b.Resource, err)
		}
		if o.Degrade, err = codec.EncodeCompact(converter.CircuitBreakerRules(), b.CircuitBreaker); err != nil {
			return out, fmt.Errorf("admin: encode the breakers suggested for %q: %w", b.Resource, err)
		}
		out.Resources[i] = o
	}
	return out, nil
}

// serveSuggest answers /api/suggest.
func serveSuggest(w http.ResponseWriter, r *http.Request, e *core.Engine) {
	period, factor, err := suggestParams(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s, err := suggest(e, period, factor)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}
