package roles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// ExtractJSON finds the answer in a final message: the last complete JSON
// object (a draft before the final object is not the answer). Inside
// ```json fenced blocks when there are any, else anywhere in the text;
// objects nested in another are part of it, not candidates.
func ExtractJSON(msg string) ([]byte, error) {
	objs := jsonObjects(msg)
	if len(objs) == 0 {
		return nil, fmt.Errorf("the reply contains no JSON object")
	}
	return objs[len(objs)-1], nil
}

// jsonObjects lists the reply's candidate answers in order.
func jsonObjects(msg string) [][]byte {
	var fenced [][]byte
	for rest := msg; ; {
		i := strings.Index(rest, "```json")
		if i < 0 {
			break
		}
		rest = rest[i+len("```json"):]
		j := strings.Index(rest, "```")
		if j < 0 {
			break
		}
		fenced = append(fenced, topObjects(rest[:j])...)
		rest = rest[j+3:]
	}
	if len(fenced) > 0 {
		return fenced
	}
	return topObjects(msg)
}

// topObjects returns the top-level {...} values of s that parse.
func topObjects(s string) [][]byte {
	var out [][]byte
	for start := strings.IndexByte(s, '{'); start >= 0; {
		dec := json.NewDecoder(strings.NewReader(s[start:]))
		var raw json.RawMessage
		next := start + 1
		if err := dec.Decode(&raw); err == nil {
			out = append(out, raw)
			next = start + int(dec.InputOffset())
		}
		k := strings.IndexByte(s[next:], '{')
		if k < 0 {
			break
		}
		start = next + k
	}
	return out
}

// decodeReply reads the reply's JSON object into v. Extra fields are allowed:
// the contract fixes what must be there, not what may not.
func decodeReply(msg string, v any) []string {
	raw, err := ExtractJSON(msg)
	if err != nil {
		return []string{err.Error()}
	}
	if n := len(jsonObjects(msg)); n > 1 {
		return []string{fmt.Sprintf("the reply contains %d JSON objects: give exactly one, the final answer", n)}
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(v); err != nil {
		return []string{"the JSON object does not match the contract: " + err.Error()}
	}
	return nil
}

// ParsePlan validates a Planner reply. The returned errors are shown to the
// Planner on retry.
func ParsePlan(msg string) (runrecord.Plan, []string) {
	var p runrecord.Plan
	if errs := decodeReply(msg, &p); errs != nil {
		return p, errs
	}
	var errs []string
	if strings.TrimSpace(p.Objective) == "" {
		errs = append(errs, "objective is empty")
	}
	if len(p.Tasks) == 0 {
		errs = append(errs, "tasks is empty: give at least one task")
	}
	for i, t := range p.Tasks {
		if strings.TrimSpace(t.Description) == "" {
			errs = append(errs, fmt.Sprintf("tasks[%d].description is empty", i))
		}
	}
	if len(p.Acceptance) == 0 {
		errs = append(errs, "acceptance is empty: give at least one observable requirement")
	}
	for i, a := range p.Acceptance {
		if strings.TrimSpace(a.Requirement) == "" {
			errs = append(errs, fmt.Sprintf("acceptance[%d].requirement is empty", i))
		}
	}
	return p, errs
}

// ParseDevReport validates a Developer or Vanilla reply.
func ParseDevReport(msg string) (runrecord.DevReport, []string) {
	var r runrecord.DevReport
	if errs := decodeReply(msg, &r); errs != nil {
		return r, errs
	}
	if strings.TrimSpace(r.Summary) == "" {
		return r, []string{"summary is empty"}
	}
	return r, nil
}

// ParseQAReport validates a QA reply's shape; Normalise then builds E_t.
func ParseQAReport(msg string) (runrecord.QAReport, []string) {
	var r runrecord.QAReport
	if errs := decodeReply(msg, &r); errs != nil {
		return r, errs
	}
	var errs []string
	switch r.QAStatus {
	case "pass", "partial", "fail":
	default:
		errs = append(errs, fmt.Sprintf("qa_status %q must be pass, partial or fail", r.QAStatus))
	}
	if len(r.VerifiedRecords)+len(r.GapRecords) == 0 {
		errs = append(errs, "no claims: give at least one verified or gap record")
	}
	check := func(kind string, cs []runrecord.Claim) {
		for i, c := range cs {
			if strings.TrimSpace(c.ClaimID) == "" || strings.TrimSpace(c.Claim) == "" {
				errs = append(errs, fmt.Sprintf("%s[%d] needs claim_id and claim", kind, i))
			}
		}
	}
	check("verified_records", r.VerifiedRecords)
	check("gap_records", r.GapRecords)
	return r, errs
}
