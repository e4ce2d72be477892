package roles

import (
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// What "corresponds" means: equal after unwrapping shell -c wrappers and
// collapsing whitespace, or equal to one simple command of an executed line.
func TestCommandRanFollowsTheDocumentedCorrespondence(t *testing.T) {
	executed := []string{
		"/bin/bash -lc 'sh greet.sh Ada'",
		`bash -lc "cd /w && ./calc.sh  2 + 3 | tee out.txt"`,
		"printf 'a\\nb' > f; cat f",
		"bash -lc 'echo it'\\''s'",
	}
	for _, c := range []struct {
		recorded string
		want     bool
	}{
		{"sh greet.sh Ada", true},
		{"bash -lc 'sh greet.sh Ada'", true}, // the wrapper as Codex reports it
		{"  sh   greet.sh Ada ", true},
		{"./calc.sh 2 + 3", true},
		{"tee out.txt", true},
		{"cat f", true},
		{"echo it's", true},
		{"sh greet.sh", false},        // a prefix is not the command
		{"sh greet.sh Ada Bo", false}, // nor a longer one
		{"sh greet.sh Grace", false},
		{"greet.sh Ada", false},
		{"", false},
	} {
		if got := commandRan(c.recorded, executed); got != c.want {
			t.Errorf("commandRan(%q) = %v, want %v", c.recorded, got, c.want)
		}
	}
	if commandRan("sh greet.sh Ada", nil) {
		t.Error("an empty tool log backs nothing")
	}
}

// Verified claims the tool log does not back become gaps with a note, and
// qa_status is recomputed from the partition.
func TestNormaliseDemotesClaimsTheToolLogDoesNotBack(t *testing.T) {
	cmd := func(c string) []runrecord.ExecutionRecord {
		return []runrecord.ExecutionRecord{{Type: "command", Command: c, Observation: "ok"}}
	}
	r := runrecord.QAReport{Iteration: 1, QAStatus: "pass", VerifiedRecords: []runrecord.Claim{
		{ClaimID: "ran", Claim: "greets Ada", ExecutionRecords: cmd("sh greet.sh Ada"), Status: "verified"},
		{ClaimID: "invented", Claim: "greets Bo", ExecutionRecords: cmd("sh greet.sh Bo"), Status: "verified"},
		{ClaimID: "pathonly", Claim: "logged", ExecutionRecords: []runrecord.ExecutionRecord{{Type: "log", Path: "run.log", Observation: "fine"}}, Status: "verified"},
		{ClaimID: "frame", Claim: "looks right", ExecutionRecords: []runrecord.ExecutionRecord{{Type: "screenshot", Path: "s.png", Observation: "logo"}}, Status: "verified"},
		{ClaimID: "mixed", Claim: "both", ExecutionRecords: append(cmd("sh greet.sh Ada"), cmd("sh greet.sh Cy")...), Status: "verified"},
	}}
	e := Normalise(r, "sha256:abc", Commands("/bin/bash -lc 'sh greet.sh Ada'"))
	if len(e.Verified) != 2 || e.Verified[0].ClaimID != "ran" || e.Verified[1].ClaimID != "frame" {
		t.Fatalf("verified %+v", e.Verified)
	}
	if len(e.Gaps) != 3 || e.QAStatus != "partial" {
		t.Fatalf("gaps %+v status %q", e.Gaps, e.QAStatus)
	}
	notes := strings.Join(e.Notes, "\n")
	for _, want := range []string{`"invented" reported verified, but its record's command "sh greet.sh Bo" is not among`, `"pathonly" reported verified, but no execution record names a command`, `"sh greet.sh Cy"`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	// A QA that ran nothing verifies nothing it claims to have run.
	r.VerifiedRecords = append(r.VerifiedRecords[:3:3], r.VerifiedRecords[4:]...) // without the frame
	none := Normalise(r, "sha256:abc", nil)
	if len(none.Verified) != 0 || none.QAStatus != "fail" || !strings.Contains(strings.Join(none.Notes, "\n"), "shows no command at all") {
		t.Fatalf("no tool log: %+v", none)
	}
}

// A verified claim's observation must be in what the CLI recorded the
// command printing: QA's "Hello, Ada!" against a recorded `Hi Ada` is a gap,
// and so is a claim about a script that did not exist.
func TestNormaliseChecksObservationsAgainstRecordedOutput(t *testing.T) {
	out := func(s string) *string { return &s }
	claim := func(id, cmd, obs string) runrecord.Claim {
		return runrecord.Claim{ClaimID: id, Claim: id, Status: "verified",
			ExecutionRecords: []runrecord.ExecutionRecord{{Type: "command", Command: cmd, Observation: obs}}}
	}
	r := runrecord.QAReport{Iteration: 1, QAStatus: "pass", VerifiedRecords: []runrecord.Claim{
		claim("false", "./greet.sh Ada", "Hello, Ada!"),
		claim("missing", "./farewell.sh Ada", "Bye, Ada!"),
		claim("true", "./greet.sh Bo", "Hello,  Bo!"),
		claim("quoted", "./greet.sh Bo", `prints "Hello, Bo!" and exits`),
		claim("quoted-false", "./greet.sh Bo", "prints `Hello, Ada!`"),
		claim("unlogged", "make check", "all tests pass"),
	}}
	e := Normalise(r, "sha256:abc", []Execution{
		{Command: "/bin/bash -lc './greet.sh Ada'", Output: out("Hi Ada\n")},
		{Command: "./farewell.sh Ada", Output: out("bash: line 1: ./farewell.sh: No such file or directory\n")},
		{Command: "cd /w && ./greet.sh Bo", Output: out("\x1b[1mHello,\x1b[0m\n  Bo!\n")},
		{Command: "make check"}, // a CLI that records no output: not checked
	})
	var verified, gaps []string
	for _, c := range e.Verified {
		verified = append(verified, c.ClaimID)
	}
	for _, c := range e.Gaps {
		gaps = append(gaps, c.ClaimID)
	}
	if strings.Join(verified, ",") != "true,quoted,unlogged" || strings.Join(gaps, ",") != "false,missing,quoted-false" {
		t.Fatalf("verified %v gaps %v", verified, gaps)
	}
	notes := strings.Join(e.Notes, "\n")
	for _, want := range []string{
		`claim "false" reported verified, but its observation "Hello, Ada!" for "./greet.sh Ada" is not in the output its CLI recorded for that command (it printed "Hi Ada")`,
		`No such file or directory`,
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if e.QAStatus != "partial" {
		t.Errorf("qa_status %q", e.QAStatus)
	}
}
