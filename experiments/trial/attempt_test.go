package trial

import (
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// A contract retry continues the CLI's session in the state directory the
// attempt used, with the errors alone; without a session it asks again in
// full, with the session and state directory it was asked with.
func TestAttemptRetry(t *testing.T) {
	c := &callSpec{iteration: 2, role: runrecord.RoleQA, prompt: "FULL PROMPT", stateDir: ""}
	a := &attempt{call: c, prompt: c.prompt, state: "/trial/iter-02/qa/attempt-1/state"}
	a.res.SessionID = "s-1"
	next := a.retry([]string{"missing field"})
	if next.session != "s-1" || next.stateDir != a.state {
		t.Errorf("session retry: session %q state %q, want s-1 in %s", next.session, next.stateDir, a.state)
	}
	if strings.Contains(next.prompt, "FULL PROMPT") || !strings.Contains(next.prompt, "missing field") {
		t.Errorf("session retry prompt %q: want the errors without the full prompt", next.prompt)
	}

	a = &attempt{call: c, prompt: c.prompt, session: "old", stateDir: "/kept", state: "/kept"}
	next = a.retry([]string{"bad json"})
	if next.session != "old" || next.stateDir != "/kept" {
		t.Errorf("sessionless retry: session %q state %q, want the ones asked with", next.session, next.stateDir)
	}
	if !strings.HasPrefix(next.prompt, "FULL PROMPT") || !strings.Contains(next.prompt, "bad json") {
		t.Errorf("sessionless retry prompt %q: want the full prompt and the errors", next.prompt)
	}
}

// The ledger line names the session; the replaced line, like every line
// of usage-replaced.jsonl, does not.
func TestAttemptLedgerLines(t *testing.T) {
	a := &attempt{call: &callSpec{iteration: 3, role: runrecord.RoleDeveloper}, n: 2, rel: "iter-03/developer/attempt-2"}
	a.res = runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: "503", SessionID: "s-9", Usage: runrecord.Usage{Input: 7}}
	want := runrecord.Invocation{Iteration: 3, Role: runrecord.RoleDeveloper, Attempt: 2, Outcome: runrecord.OutcomeInfraFailure,
		Evidence: "503", Usage: runrecord.Usage{Input: 7}, Session: "s-9", Dir: "iter-03/developer/attempt-2"}
	if got := a.ledgerLine(); got != want {
		t.Errorf("ledger line %+v, want %+v", got, want)
	}
	want.Session = ""
	if got := a.replacedLine(); got != want {
		t.Errorf("replaced line %+v, want %+v", got, want)
	}
	ie := a.call.infra("503", CauseTransport)
	if ie.Stage != "iteration 3 developer" || ie.Cause != CauseTransport || ie.Local {
		t.Errorf("infra error %+v", ie)
	}
	if ie := a.call.infra("disk full", CauseLocal); !ie.Local {
		t.Errorf("a local fault's infra error %+v is not Local", ie)
	}
}
