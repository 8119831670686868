package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "suggest", args: "--from URL", summary: "print rules suggested from a running service's measured baseline",
		help: `Asks a running service for the rules suggested from what its engine
measured (the JSON API of its admin page, admin.Handler: URL is the page's,
such as http://10.0.0.7:8080/debug/bulwark/, or its api/suggest) and prints
the document of --kind (flow, degrade or ruleset) to standard output, ready
for bulwark apply, with a summary per resource on standard error.

Over --period (at most 1h), for each resource with enough traffic (30
seconds with entries), the suggestions are: a QPS flow rule at --factor
times the peak pass QPS; a slow-call breaker at factor times the peak
per-second average RT; an error-ratio breaker at factor times the peak
per-second error ratio (at least 0.1 above it). Every suggested rule is a
shadow rule ("shadow": true): it counts what it would block and blocks
nothing. The document is the rules in force in that service with the
suggestions in place of the resources' shadow rules, so that applying it
to the source the service follows adds shadow rules and changes no
enforcing rule: see the diff bulwark apply shows.

Exit codes: 0 printed, 1 the service sent an invalid document, 2 usage
(or a parameter the service refused), 4 the service could not be reached.`,
		run: runSuggest,
	})
}

// suggestReply is what /api/suggest answers (package admin).
type suggestReply struct {
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Factor    float64   `json:"factor"`
	Resources []struct {
		Resource       string     `json:"resource"`
		PeakQPS        int64      `json:"peakQps"`
		PeakAt         *time.Time `json:"peakAt"`
		PeakErrorRatio float64    `json:"peakErrorRatio"`
		PeakAvgRTMs    float64    `json:"peakAvgRtMs"`
		Flow           []struct {
			Count float64 `json:"count"`
		} `json:"flow"`
		Degrade []struct {
			Grade              int     `json:"grade"`
			Count              float64 `json:"count"`
			SlowRatioThreshold float64 `json:"slowRatioThreshold"`
		} `json:"degrade"`
		Note string `json:"note"`
	} `json:"resources"`
	Documents map[string]json.RawMessage `json:"documents"`
}

func runSuggest(ctx context.Context, e *env, args []string) error {
	c := commands["suggest"]
	fs := newFlags(c)
	var (
		from, kindName string
		period         time.Duration
		factor         float64
		timeout        time.Duration
	)
	fs.StringVar(&from, "from", "", "URL of the service's admin page (admin.Handler), or of its api/suggest")
	fs.DurationVar(&period, "period", 10*time.Minute, "the span measured, at most 1h")
	fs.Float64Var(&factor, "factor", 1.3, "headroom over the observed peaks, 1 to 10")
	fs.StringVar(&kindName, "kind", "flow", "the document to print: flow, degrade or ruleset")
	fs.DurationVar(&timeout, "timeout", defaultTimeout, "give up on an unreachable service after this long (exit 4)")
	if _, err := parse(e, c, fs, args, 0, 0); err != nil {
		return err
	}
	if from == "" {
		return failf(exitUsage, "--from URL is required: the admin page of a running service (see bulwark suggest --help)")
	}
	k, err := rulechange.KindNamed(kindName)
	if err != nil {
		return err
	}
	if k.Name() != "flow" && k.Name() != "degrade" && k.Name() != "ruleset" {
		return failf(exitUsage, "--kind %s: suggestions are flow, degrade or ruleset documents", k.Name())
	}
	u, err := suggestURL(from, period, factor)
	if err != nil {
		return fail(exitUsage, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reply, err := fetchSuggestion(ctx, u)
	if err != nil {
		return err
	}
	doc, ok := reply.Documents[k.Name()]
	if !ok {
		return failf(exitInvalid, "%s sent no %s document", u.Redacted(), k.Name())
	}
	canon, _, err := k.Canonical(doc)
	if err != nil {
		return failf(exitInvalid, "%s sent an invalid %s document: %w", u.Redacted(), k.Name(), err)
	}
	_, _ = e.stdout.Write(canon)
	printSuggestion(e.stderr, reply)
	return nil
}

// suggestURL is the api/suggest URL of the admin page at from, with the
// parameters.
func suggestURL(from string, period time.Duration, factor float64) (*url.URL, error) {
	u, err := url.Parse(from)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--from %q: want the http(s) URL of a service's admin page", from)
	}
	if !strings.HasSuffix(u.Path, "/api/suggest") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/api/suggest"
		u.RawPath = ""
	}
	q := u.Query()
	q.Set("period", period.String())
	q.Set("factor", strconv.FormatFloat(factor, 'g', -1, 64))
	u.RawQuery = q.Encode()
	return u, nil
}

// fetchSuggestion gets and decodes the suggestion at u.
func fetchSuggestion(ctx context.Context, u *url.URL) (*suggestReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fail(exitUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold credentials
		}
		return nil, failf(exitUnreachable, "%s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, failf(exitUnreachable, "%s: %w", u.Redacted(), err)
	}
	switch {
	case resp.StatusCode == http.StatusBadRequest:
		return nil, failf(exitUsage, "%s refused: %s", u.Redacted(), strings.TrimSpace(string(body)))
	case resp.StatusCode != http.StatusOK:
		return nil, failf(exitUnreachable, "%s: %s: %s", u.Redacted(), resp.Status, firstLine(body))
	}
	var r suggestReply
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, failf(exitUnreachable, "%s did not answer with a suggestion (is it an admin page?): %w", u.Redacted(), err)
	}
	return &r, nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// printSuggestion prints a line per resource: its baseline and the rules
// suggested, or why none.
func printSuggestion(w io.Writer, r *suggestReply) {
	fmt.Fprintf(w, "suggested from %s to %s, factor %g, every rule in shadow:\n",
		r.From.Format(time.DateTime), r.To.Format(time.DateTime), r.Factor)
	if len(r.Resources) == 0 {
		fmt.Fprintln(w, "  no resource had traffic")
	}
	for _, b := range r.Resources {
		var parts []string
		if b.PeakAt != nil {
			parts = append(parts, fmt.Sprintf("peak %d/s at %s", b.PeakQPS, b.PeakAt.Format(time.TimeOnly)))
		}
		for _, f := range b.Flow {
			parts = append(parts, fmt.Sprintf("flow count %g", f.Count))
		}
		for _, d := range b.Degrade {
			switch d.Grade {
			case 0:
				parts = append(parts, fmt.Sprintf("slow-call breaker at %g ms (peak avg RT %.1f ms)", d.Count, b.PeakAvgRTMs))
			case 1:
				parts = append(parts, fmt.Sprintf("error-ratio breaker at %g (peak %.3g)", d.Count, b.PeakErrorRatio))
			}
		}
		if b.Note != "" {
			parts = append(parts, b.Note)
		}
		fmt.Fprintf(w, "  %s: %s\n", b.Resource, strings.Join(parts, "; "))
	}
}
