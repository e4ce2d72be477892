package roles

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

func TestRenderInsertsSpecVerbatimAndIndex(t *testing.T) {
	spec := "Build a calculator.\n\n* with {{braces}} kept as is"
	p, err := Render(Planner, Slots{Iteration: 2, Spec: spec, Access: "read-only",
		Materials: []Material{{Category: "Evidence", Path: "/ctx/evidence-1.json", About: "2 verified, 1 gap"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{spec, "Role: Project Planner (HoH iteration 2)\n", "- Evidence:", "`/ctx/evidence-1.json`: 2 verified, 1 gap", "must not create, modify or delete"} {
		if !strings.Contains(p, want) {
			t.Errorf("planner prompt lacks %q:\n%s", want, p)
		}
	}
	for _, k := range []Kind{Developer, QA, Vanilla, Continuation} {
		if _, err := Render(k, Slots{Iteration: 1, Spec: spec, Access: "write"}); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

func TestParsePlan(t *testing.T) {
	good := "Here it is:\n```json\n{\"objective\":\"o\",\"tasks\":[{\"id\":\"T1\",\"description\":\"d\"}],\"preserve\":[],\"acceptance\":[{\"id\":\"R1\",\"requirement\":\"r\"}]}\n```"
	if _, errs := ParsePlan(good); errs != nil {
		t.Fatalf("good plan refused: %v", errs)
	}
	if _, errs := ParsePlan(`{"objective":"","tasks":[],"acceptance":[]}`); len(errs) != 3 {
		t.Fatalf("want 3 errors, got %v", errs)
	}
	if _, errs := ParsePlan("no json at all"); len(errs) != 1 || !strings.Contains(errs[0], "no JSON") {
		t.Fatalf("got %v", errs)
	}
	// A bare object after prose with a stray brace before it.
	if p, errs := ParsePlan(`I think {this} is it: {"objective":"x","tasks":[{"id":"a","description":"b"}],"acceptance":[{"id":"r","requirement":"q"}]}`); errs != nil || p.Objective != "x" {
		t.Fatalf("got %+v %v", p, errs)
	}
}

func TestNormaliseKeepsSetsDisjointAndRefusesUnsupportedVerification(t *testing.T) {
	rec := []runrecord.ExecutionRecord{{Type: "command", Command: "sh calc.sh 1 2", Observation: "prints 3"}}
	r := runrecord.QAReport{Iteration: 2, QAStatus: "partial",
		VerifiedRecords: []runrecord.Claim{
			{ClaimID: "add", Claim: "adds", ExecutionRecords: rec, Status: "verified"},
			{ClaimID: "sub", Claim: "subtracts", Status: "verified"},                         // no execution record
			{ClaimID: "mul", Claim: "multiplies", ExecutionRecords: rec, Status: "verified"}, // also a gap below
		},
		GapRecords: []runrecord.Claim{{ClaimID: "mul", Claim: "multiplies", ExecutionRecords: rec, Status: "gap", RecommendedUpdate: "Fix multiply"}},
	}
	e := Normalise(r, "sha256:abc", Commands("sh calc.sh 1 2"))
	ids := func(cs []runrecord.Claim) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.ClaimID+"="+c.Status)
		}
		return strings.Join(s, ",")
	}
	if got := ids(e.Verified); got != "add=verified" {
		t.Fatalf("verified = %s", got)
	}
	if got := ids(e.Gaps); got != "mul=gap,sub=gap" {
		t.Fatalf("gaps = %s", got)
	}
	if len(e.Notes) != 2 {
		t.Fatalf("notes %v", e.Notes)
	}
	h := e.Handoff
	if len(h.PreservationConstraints) != 1 || !strings.Contains(h.PreservationConstraints[0], "adds") ||
		len(h.UpdateTargets) != 2 || h.UpdateTargets[0] != "Fix multiply" || len(h.ValidationRequirements) != 2 {
		t.Fatalf("handoff %+v", h)
	}
	if e.CandidateDigest != "sha256:abc" {
		t.Fatal("evidence must be bound to the candidate digest")
	}
}

func TestParseQAReport(t *testing.T) {
	_, errs := ParseQAReport(`{"iteration":1,"qa_status":"done","verified_records":[],"gap_records":[]}`)
	if len(errs) != 2 {
		t.Fatalf("want bad status and no claims, got %v", errs)
	}
}

func TestVanillaPromptIsTheSpecificationAlone(t *testing.T) {
	spec := "Build a calculator.\n\n* with {{braces}} kept as is"
	p, err := Render(Vanilla, Slots{Iteration: 1, Spec: spec, Access: "write"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(p) != spec {
		t.Fatalf("the Vanilla prompt must be the public specification and nothing else, got:\n%s", p)
	}
	c, _ := Render(Continuation, Slots{Iteration: 2, Spec: spec, Access: "write"})
	if strings.Contains(c, "JSON") || strings.Contains(c, "Boundaries") {
		t.Fatalf("p_cont carries no hoh contract:\n%s", c)
	}
}

func TestEvidenceWritesEmptyListsAsEmptyArrays(t *testing.T) {
	data, err := json.Marshal(Normalise(runrecord.QAReport{Iteration: 1, QAStatus: "fail",
		GapRecords: []runrecord.Claim{{ClaimID: "c1", Claim: "runs"}}}, "sha256:x", nil))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("null")) || !bytes.Contains(data, []byte(`"verified_records":[]`)) ||
		!bytes.Contains(data, []byte(`"preservation_constraints":[]`)) || !bytes.Contains(data, []byte(`"execution_records":[]`)) {
		t.Fatalf("evidence.json must write empty lists as []: %s", data)
	}
}

// A record's status must match its list; "pass" only without gaps.
func TestNormaliseStatusFollowsTheRecords(t *testing.T) {
	rec := []runrecord.ExecutionRecord{{Type: "command", Command: "sh greet.sh Ada", Observation: "ok"}}
	r := runrecord.QAReport{Iteration: 1, QAStatus: "pass", VerifiedRecords: []runrecord.Claim{
		{ClaimID: "ok", Claim: "greets", ExecutionRecords: rec, Status: "verified"},
		{ClaimID: "mislisted", Claim: "styled", ExecutionRecords: rec, Status: "gap"},
	}}
	e := Normalise(r, "sha256:abc", Commands("sh greet.sh Ada"))
	if len(e.Verified) != 1 || e.Verified[0].ClaimID != "ok" || len(e.Gaps) != 1 || e.Gaps[0].ClaimID != "mislisted" {
		t.Fatalf("verified %+v gaps %+v", e.Verified, e.Gaps)
	}
	if e.QAStatus != "partial" {
		t.Fatalf("qa_status %q kept with a gap", e.QAStatus)
	}
}

// The answer is the last complete JSON object; several candidates are a
// contract violation (the role is asked again).
func TestReplyWithSeveralObjectsIsAContractViolation(t *testing.T) {
	draft := `{"objective":"draft","tasks":[{"id":"a","description":"b"}],"acceptance":[{"id":"r","requirement":"q"}]}`
	final := `{"objective":"final","tasks":[{"id":"a","description":"b"}],"acceptance":[{"id":"r","requirement":"q"}]}`
	raw, err := ExtractJSON("Draft: " + draft + "\nFinal: " + final)
	if err != nil || !strings.Contains(string(raw), `"final"`) {
		t.Fatalf("answer %s %v, want the last object", raw, err)
	}
	if _, errs := ParsePlan("Draft: " + draft + "\nFinal: " + final); len(errs) != 1 || !strings.Contains(errs[0], "2 JSON objects") {
		t.Fatalf("errors %v", errs)
	}
	if _, errs := ParsePlan("```json\n" + draft + "\n```\nthen\n```json\n" + final + "\n```"); len(errs) != 1 {
		t.Fatalf("two fenced answers: %v", errs)
	}
	if p, errs := ParsePlan("Here: " + final); errs != nil || p.Objective != "final" {
		t.Fatalf("one object: %+v %v", p, errs)
	}
}
