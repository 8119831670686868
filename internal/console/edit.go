package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// The console changes rules only through rulechange, the machinery of the
// CLI: the same validation, diff, compare-and-set write and history.

// maxEditBody bounds a write's request body.
const maxEditBody = 4 << 20

// ruleView is one rule as the page shows and edits it.
type ruleView struct {
	Section  string          `json:"section,omitempty"`
	Index    int             `json:"index"`
	Label    string          `json:"label"`
	Resource string          `json:"resource"`
	Rule     json.RawMessage `json:"rule"` // the canonical rule, fields in Java's order
	// Text is the rule for a person: the fields that differ from Java's
	// defaults, enums by name, as the CLI's diff lines show a rule.
	Text string `json:"text"`
	// Names name the enum values among the rule's fields ({"grade": "QPS"}).
	Names map[string]string `json:"names"`
}

// docView is what /api/doc answers: the document as read, its rules, or
// why it does not decode.
type docView struct {
	Source   int        `json:"source"`
	Name     string     `json:"name"`
	Revision string     `json:"revision"`
	Missing  bool       `json:"missing"`
	Kind     string     `json:"kind"`
	Rules    []ruleView `json:"rules"`
	// Problem says why the document does not decode; Data is its text,
	// shown so that a person can replace it.
	Problem string                     `json:"problem,omitempty"`
	Data    string                     `json:"data"`
	Groups  []rulechange.OverlayStatus `json:"groups"`
	// GroupsNote says what the list of groups may leave out.
	GroupsNote string `json:"groupsNote,omitempty"`
}

// editReq is every write's body. Revision (with Missing) is the document
// as the page read it: the write is compare-and-set on it.
type editReq struct {
	Source   int    `json:"source"`
	Revision string `json:"revision"`
	Missing  bool   `json:"missing"`
	// Review asks for the plan (the diff) only: nothing is written.
	Review bool `json:"review"`

	// An edit of one rule: Op is "add", "change" or "delete"; Section and
	// Index name the rule (change, delete); Rule is the new rule (add,
	// change); Group writes to that canary group's overlay instead.
	Op      string          `json:"op"`
	Section string          `json:"section"`
	Index   int             `json:"index"`
	Rule    json.RawMessage `json:"rule"`
	Group   string          `json:"group"`
	// GroupRevision is the overlay's revision as the page read it ("":
	// it had none): the overlay is written only if it is still there.
	GroupRevision string `json:"groupRevision"`

	// Data replaces a document that does not decode (replace).
	Data string `json:"data"`
	// Seq is the history entry to roll back (rollback).
	Seq int `json:"seq"`
}

// planView is what a review or an apply answers.
type planView struct {
	Changes  []rulechange.Change `json:"changes"`
	Summary  string              `json:"summary"`
	Target   string              `json:"target"` // the document (or overlay) written
	Revision string              `json:"revision"`
	Replaced string              `json:"replaced,omitempty"` // the current document does not decode: it is replaced whole
	Applied  bool                `json:"applied"`
	Written  string              `json:"written,omitempty"` // the new revision
	Seq      int                 `json:"seq,omitempty"`     // the history entry recorded
	Warning  string              `json:"warning,omitempty"`
}

// conflictView is the answer to a write whose document changed since the
// page read it: what it is now, and the recorded changes since.
type conflictView struct {
	Error    string             `json:"error"`
	Conflict bool               `json:"conflict"`
	Current  docView            `json:"current"`
	Since    []rulechange.Entry `json:"since"` // the history entries after the revision the page read
}

// invalidView is the answer to an edit that does not validate.
type invalidView struct {
	Error    string               `json:"error"`
	Field    string               `json:"field,omitempty"`
	Findings []rulechange.Finding `json:"findings"`
}

func (s *Server) center(w http.ResponseWriter, i int) (*rulechange.Center, bool) {
	if i < 0 || i >= len(s.docs) || s.docs[i].Center == nil {
		writeError(w, http.StatusNotFound, "no such source: "+strconv.Itoa(i))
		return nil, false
	}
	return s.docs[i].Center, true
}

func (s *Server) getDocs(w http.ResponseWriter, _ *http.Request, _ who) {
	type docName struct {
		Source int    `json:"source"`
		Name   string `json:"name"`
	}
	out := []docName{}
	for i, d := range s.docs {
		if d.Center != nil {
			out = append(out, docName{i, d.Name})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getDoc(w http.ResponseWriter, r *http.Request, _ who) {
	i, _ := strconv.Atoi(r.URL.Query().Get("source"))
	c, ok := s.center(w, i)
	if !ok {
		return
	}
	v, err := s.readDoc(r.Context(), i, c)
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// readDoc reads the document of source i and its canary groups.
func (s *Server) readDoc(ctx context.Context, i int, c *rulechange.Center) (docView, error) {
	cur, err := c.Read(ctx)
	if err != nil {
		return docView{}, err
	}
	v := docView{Source: i, Name: c.Display(), Revision: cur.Revision, Missing: cur.Missing, Data: string(cur.Data), Rules: []ruleView{}, Groups: []rulechange.OverlayStatus{}}
	k, err := rulechange.PickKind("", cur.Data, c.Name())
	if err != nil {
		return docView{}, err
	}
	v.Kind = k.Name()
	rules, err := k.Rules(cur.Data, cur.Missing)
	if err != nil {
		v.Problem = fmt.Sprintf("does not decode as %s rules: %v", k.Name(), err)
		return v, nil
	}
	for _, r := range rules {
		v.Rules = append(v.Rules, ruleView{Section: r.Section, Index: r.Index, Label: r.Label(), Resource: r.Resource(), Rule: encodeRule(r), Text: r.Text(), Names: r.Names()})
	}
	groups := slices.Clone(s.cfg.canary)
	if listed, note, err := c.OverlayGroups(ctx); err == nil {
		groups, v.GroupsNote = append(groups, listed...), note
	} else {
		v.GroupsNote = "the overlays could not be listed: " + err.Error()
	}
	slices.Sort(groups)
	for _, g := range slices.Compact(groups) {
		st, err := c.Status(ctx, cur, g, k.Name())
		if err != nil {
			st.Problem = err.Error()
		}
		v.Groups = append(v.Groups, st)
	}
	return v, nil
}

// encodeRule is a rule as one JSON object, its fields in order.
func encodeRule(r rulechange.Rule) json.RawMessage {
	b := []byte{'{'}
	for i, f := range r.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(f.Name)
		b = append(append(append(b, name...), ':'), f.Value...)
	}
	return append(b, '}')
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request, _ who) {
	i, _ := strconv.Atoi(r.URL.Query().Get("source"))
	c, ok := s.center(w, i)
	if !ok {
		return
	}
	es, err := c.History(r.Context())
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	slices.Reverse(es) // newest first
	if es == nil {
		es = []rulechange.Entry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"history": c.HistoryName(), "entries": es})
}

// decodeEdit reads a write's body.
func decodeEdit(w http.ResponseWriter, r *http.Request) (editReq, bool) {
	var e editReq
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxEditBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		writeError(w, http.StatusBadRequest, "bad request: "+err.Error())
		return e, false
	}
	return e, true
}

// edit adds, changes or deletes one rule of the document as the page read
// it (or of a canary group's overlay: Group).
func (s *Server) edit(w http.ResponseWriter, r *http.Request, u who) {
	e, ok := decodeEdit(w, r)
	if !ok {
		return
	}
	c, ok := s.center(w, e.Source)
	if !ok {
		return
	}
	ctx := r.Context()
	cur, ok := s.readAt(ctx, w, e, c)
	if !ok {
		return
	}
	k, err := rulechange.PickKind("", cur.Data, c.Name())
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	rules, err := k.Rules(cur.Data, cur.Missing)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, invalidView{Error: fmt.Sprintf("%s does not decode as %s rules (%v): replace it first", c.Display(), k.Name(), err), Findings: []rulechange.Finding{}})
		return
	}
	var label string
	switch e.Op {
	case "add", "change":
		fs, err := rulechange.ObjectFields(e.Rule)
		if err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, invalidView{Error: "the rule: " + err.Error(), Findings: []rulechange.Finding{}})
			return
		}
		if e.Op == "add" {
			nr := rulechange.Rule{Section: e.Section, Kind: k, Fields: fs}
			for _, x := range rules {
				if x.Section == e.Section {
					nr.Kind, nr.Index = x.Kind, max(nr.Index, x.Index+1)
				}
			}
			rules = append(rules, nr)
			var res string
			_ = json.Unmarshal(nr.Get("resource"), &res)
			label = "add " + res
			break
		}
		j := findRule(rules, e.Section, e.Index)
		if j < 0 {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no rule %s[%d] in %s", e.Section, e.Index, c.Display()))
			return
		}
		label = "change " + rules[j].Label()
		rules[j].Fields = fs
	case "delete":
		j := findRule(rules, e.Section, e.Index)
		if j < 0 {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no rule %s[%d] in %s", e.Section, e.Index, c.Display()))
			return
		}
		label = "delete " + rules[j].Label()
		rules = slices.Delete(rules, j, j+1)
	default:
		writeError(w, http.StatusBadRequest, "op: want add, change or delete")
		return
	}
	canon := k.Encode(rules)
	if _, fs, err := k.Check("the edited document", canon); err != nil {
		writeInvalid(w, fs, err)
		return
	}
	next := canon
	if !cur.Missing {
		if next, err = k.Over(cur.Data, canon); err != nil {
			writeInvalid(w, nil, err)
			return
		}
	}
	name := "the console edit by " + u.Name
	var p *rulechange.Plan
	if e.Group != "" {
		p, err = rulechange.PlanApply(ctx, c, k, next, name, e.Group)
		if err == nil {
			defer p.Center.Close()
			p.Command = "console " + label + " (canary " + e.Group + ")"
			if now := rulechange.RevisionOf(p.Current); (e.GroupRevision == "") != p.Current.Missing || (!p.Current.Missing && now != e.GroupRevision) {
				s.writeConflict(w, r, e, c)
				return
			}
		}
	} else {
		p, err = rulechange.NewPlan(c, k, cur, next, name, "console "+label)
	}
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	s.carry(w, r, e, u, c, p)
}

// findRule is the position in rules of the rule Index of section.
func findRule(rules []rulechange.Rule, section string, index int) int {
	return slices.IndexFunc(rules, func(r rulechange.Rule) bool { return r.Section == section && r.Index == index })
}

// replace writes Data over a document that does not decode (or any
// document), compare-and-set on the revision the page read.
func (s *Server) replace(w http.ResponseWriter, r *http.Request, u who) {
	e, ok := decodeEdit(w, r)
	if !ok {
		return
	}
	c, ok := s.center(w, e.Source)
	if !ok {
		return
	}
	cur, ok := s.readAt(r.Context(), w, e, c)
	if !ok {
		return
	}
	k, err := rulechange.PickKind("", []byte(e.Data), c.Name())
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	if _, fs, err := k.Check("the replacement", []byte(e.Data)); err != nil {
		writeInvalid(w, fs, err)
		return
	}
	p, err := rulechange.NewPlan(c, k, cur, []byte(e.Data), "the replacement by "+u.Name, "console replace")
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	s.carry(w, r, e, u, c, p)
}

// rollback writes back the document that history entry Seq replaced.
func (s *Server) rollback(w http.ResponseWriter, r *http.Request, u who) {
	s.planned(w, r, u, func(ctx context.Context, c *rulechange.Center, e editReq) (*rulechange.Plan, error) {
		p, err := rulechange.PlanRollback(ctx, c, "", e.Seq)
		if p != nil {
			p.Command = "console " + p.Command
		}
		return p, err
	})
}

// promote writes a canary group's overlay as the document and removes it.
func (s *Server) promote(w http.ResponseWriter, r *http.Request, u who) {
	s.planned(w, r, u, func(ctx context.Context, c *rulechange.Center, e editReq) (*rulechange.Plan, error) {
		p, err := rulechange.PlanPromote(ctx, c, e.Group, "")
		if p != nil {
			p.Command = "console " + p.Command
		}
		return p, err
	})
}

// abort removes a canary group's overlay: its instances return to the
// document. Revision is the overlay's, as the page read it.
func (s *Server) abort(w http.ResponseWriter, r *http.Request, u who) {
	s.planned(w, r, u, func(ctx context.Context, c *rulechange.Center, e editReq) (*rulechange.Plan, error) {
		p, err := rulechange.PlanAbort(ctx, c, e.Group, "")
		if p != nil {
			p.Command = "console " + p.Command
		}
		return p, err
	})
}

// planned carries a plan that rulechange reads itself (rollback, promote,
// abort): it is written only if it starts from the revision the page read.
func (s *Server) planned(w http.ResponseWriter, r *http.Request, u who, mk func(context.Context, *rulechange.Center, editReq) (*rulechange.Plan, error)) {
	e, ok := decodeEdit(w, r)
	if !ok {
		return
	}
	c, ok := s.center(w, e.Source)
	if !ok {
		return
	}
	p, err := mk(r.Context(), c, e)
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	if p.Center != c {
		defer p.Center.Close()
	}
	if p.Current.Revision != e.Revision || p.Current.Missing != e.Missing {
		s.writeConflict(w, r, e, c)
		return
	}
	s.carry(w, r, e, u, c, p)
}

// readAt reads the document and checks that it is still at the revision
// the page read; if not it answers the conflict.
func (s *Server) readAt(ctx context.Context, w http.ResponseWriter, e editReq, c *rulechange.Center) (datasource.Snapshot, bool) {
	cur, err := c.Read(ctx)
	if err != nil {
		s.writeFailure(w, err)
		return cur, false
	}
	if cur.Revision != e.Revision || cur.Missing != e.Missing {
		s.writeConflict(w, nil, e, c)
		return cur, false
	}
	return cur, true
}

// carry answers the plan p (Review) or writes it, recorded in the history
// as u's.
func (s *Server) carry(w http.ResponseWriter, r *http.Request, e editReq, u who, c *rulechange.Center, p *rulechange.Plan) {
	v := planView{Changes: p.Changes, Summary: rulechange.Summary(p.Changes), Target: p.Center.Display(), Revision: rulechange.RevisionOf(p.Current)}
	if v.Changes == nil {
		v.Changes = []rulechange.Change{}
	}
	if p.Replaced != nil {
		v.Replaced = p.Replaced.Error()
	}
	if e.Review || p.Empty() {
		writeJSON(w, http.StatusOK, v)
		return
	}
	res, err := p.Carry(r.Context(), u.Name, 0)
	if errors.Is(err, datasource.ErrConflict) {
		s.writeConflict(w, r, e, c)
		return
	}
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	v.Applied, v.Written, v.Seq = true, res.Revision, res.Seq
	if res.HistoryErr != nil {
		v.Warning = "written, but " + res.HistoryErr.Error()
	}
	s.cfg.log.Info("console: rules written", "user", u.Name, "source", p.Center.Display(), "command", p.Command,
		"from", rulechange.RevisionOf(p.Current), "to", res.Revision, "changes", rulechange.Lines(p.Changes))
	writeJSON(w, http.StatusOK, v)
}

// writeConflict answers 409 with the document as it is now and the
// history entries recorded since the revision the page read.
func (s *Server) writeConflict(w http.ResponseWriter, r *http.Request, e editReq, c *rulechange.Center) {
	ctx := context.Background()
	if r != nil {
		ctx = r.Context()
	}
	v := conflictView{Conflict: true, Since: []rulechange.Entry{},
		Error: fmt.Sprintf("%s changed since you read it at revision %s: nothing written; review your change again on the new document", c.Display(), orNone(e.Revision, e.Missing))}
	cur, err := s.readDoc(ctx, e.Source, c)
	if err == nil {
		v.Current = cur
	}
	if es, err := c.History(ctx); err == nil {
		for i, en := range es {
			if en.From == e.Revision && !(e.Missing && en.From != "") {
				v.Since = es[i:]
				break
			}
		}
	}
	writeJSON(w, http.StatusConflict, v)
}

func orNone(rev string, missing bool) string {
	if missing {
		return "none (it did not exist)"
	}
	return rev
}

// writeInvalid answers 422 with the findings of a document that does not
// validate, the first naming the field.
func writeInvalid(w http.ResponseWriter, fs []rulechange.Finding, err error) {
	v := invalidView{Error: err.Error(), Findings: fs}
	for _, f := range fs {
		if f.Severity == "error" {
			v.Error, v.Field = f.Text, f.Path
			break
		}
	}
	if v.Findings == nil {
		v.Findings = []rulechange.Finding{}
	}
	writeJSON(w, http.StatusUnprocessableEntity, v)
}

// writeFailure answers an error of rulechange by its class.
func (s *Server) writeFailure(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, datasource.ErrConflict):
		code = http.StatusConflict
	case errors.Is(err, rulechange.ErrInvalid):
		code = http.StatusUnprocessableEntity
	case errors.Is(err, rulechange.ErrArgument):
		code = http.StatusBadRequest
	case errors.Is(err, rulechange.ErrUnreachable):
		code = http.StatusBadGateway
	}
	s.cfg.log.Warn("console: request failed", "err", err)
	writeError(w, code, err.Error())
}
