package rulechange

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	corerule "github.com/bulwark-go/bulwark/core/rule"
)

// Finding is one problem or warning of a document, as validate reports it.
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"`       // "error" or "warning"
	Rule     *int   `json:"rule,omitempty"` // the rule's index in its list
	Resource string `json:"resource,omitempty"`
	Path     string `json:"path,omitempty"` // the field's JSON path: [3].count
	Message  string `json:"message"`
	Text     string `json:"text"` // the line validate prints
}

// Findings lists the problems of err (a converter.DecodeError's, one each,
// else err itself) and warns, in the document name.
func Findings(name string, err error, warns []converter.Problem) []Finding {
	var out []Finding
	var de *converter.DecodeError
	switch {
	case errors.As(err, &de):
		for _, p := range de.Problems {
			out = append(out, findingOf(name, p, "error"))
		}
	case err != nil:
		out = append(out, Finding{File: name, Severity: "error", Message: err.Error(), Text: name + ": " + err.Error()})
	}
	for _, p := range warns {
		out = append(out, findingOf(name, p, "warning"))
	}
	return out
}

func findingOf(name string, p converter.Problem, severity string) Finding {
	f := Finding{File: name, Line: p.Line, Column: p.Column, Severity: severity, Resource: p.Resource, Path: p.Path, Message: p.Message}
	if p.Rule >= 0 {
		r := p.Rule
		f.Rule = &r
	}
	msg := p.Error()
	if p.Line > 0 {
		// A problem of the whole document starts with its position already.
		msg = strings.TrimPrefix(msg, fmt.Sprintf("%d:%d: ", p.Line, p.Column))
	}
	if severity == "warning" {
		msg = "warning: " + msg
	}
	pos := name + ":"
	if p.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d:", name, p.Line, p.Column)
	}
	f.Text = pos + " " + msg
	return f
}

// Check reads data (named name in findings) as a service would: decoded
// strictly, then loaded into an engine of its own, which checks the rules
// against each other (a shadow cluster rule may not share an enforcing
// rule's flowId). It returns the canonical document, every problem and
// warning, and an ErrInvalid error when data is not valid.
func (k *Kind) Check(name string, data []byte) (canon []byte, fs []Finding, err error) {
	canon, warns, err := k.codec.canonical(data)
	fs = Findings(name, err, warns)
	if err == nil {
		if err = k.codec.inEngine(canon); err != nil {
			fs = append(fs, engineFindings(name, k, canon, err)...)
		}
	}
	if err != nil {
		return canon, fs, class(ErrInvalid, err)
	}
	return canon, fs, nil
}

// setKeys names the engine's rule kinds as a rule set's keys.
var setKeys = map[string]string{"flow": "flow", "circuitbreaker": "degrade", "system": "system", "authority": "authority", "hotspot": "paramFlow"}

// engineFindings lists as findings what an engine refused of the valid
// document canon (anyCodec.inEngine's err): rules that may not stand
// beside others of their list.
func engineFindings(name string, k *Kind, canon []byte, err error) []Finding {
	rules, _ := parseRules(k, canon)
	var out []Finding
	for _, ve := range validationErrors(err) {
		section := ""
		if k.name == "ruleset" {
			section = setKeys[ve.Kind]
		}
		for _, re := range ve.Rules {
			res := ""
			if i := slices.IndexFunc(rules, func(r Rule) bool { return r.Section == section && r.Index == re.Index }); i >= 0 {
				res = rules[i].Resource()
			}
			for _, fe := range corerule.Fields(re.Err) {
				path := fmt.Sprintf("%s[%d]", section, re.Index)
				if fe.Field != "" {
					path += "." + fe.Field
				}
				p := converter.Problem{Path: path, Rule: re.Index, Resource: res, Message: fe.Err.Error(), Err: converter.ErrInvalid}
				out = append(out, findingOf(name, p, "error"))
			}
		}
	}
	if out == nil {
		out = []Finding{{File: name, Severity: "error", Message: err.Error(), Text: name + ": " + err.Error()}}
	}
	return out
}

// validationErrors returns the *core.ValidationError of each kind in err
// (LoadRuleSet joins them).
func validationErrors(err error) []*core.ValidationError {
	if ve, ok := err.(*core.ValidationError); ok {
		return []*core.ValidationError{ve}
	}
	var all []*core.ValidationError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			all = append(all, validationErrors(e)...)
		}
	}
	return all
}
