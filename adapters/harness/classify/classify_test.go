package classify

import (
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		name     string
		ev       Evidence
		want     runrecord.Outcome
		evidence string
	}{
		{"completed", Evidence{Completed: true}, runrecord.OutcomeCompleted, ""},
		{"pi exit 0 with API 500", Evidence{Problems: []string{"500 internal error"}}, runrecord.OutcomeInfraFailure, "500 internal error"},
		{"opencode 429", Evidence{Exit: sandbox.Exit{Code: 1}, Problems: []string{"APIError (status 429): slow down"}}, runrecord.OutcomeInfraFailure, "429"},
		{"auth", Evidence{Exit: sandbox.Exit{Code: 1}, Problems: []string{"401 invalid x-api-key"}}, runrecord.OutcomeInfraFailure, "401"},
		{"transport", Evidence{Exit: sandbox.Exit{Code: 1}, Problems: []string{"fetch failed: ECONNREFUSED"}}, runrecord.OutcomeInfraFailure, "ECONNREFUSED"},
		{"400 is the agent's", Evidence{Exit: sandbox.Exit{Code: 1}, Problems: []string{"APIError (status 400): context length exceeded"}}, runrecord.OutcomeAgentFailure, "context length exceeded"},
		{"denied tool with exit 0", Evidence{Completed: true, Problems: []string{"tool Bash was denied"}}, runrecord.OutcomeAgentFailure, "Bash was denied"},
		{"idle", Evidence{Exit: sandbox.Exit{Code: -1, Idle: true, Detail: "killed after 5s without output"}}, runrecord.OutcomeTimeout, "without output"},
		{"wall beats errors", Evidence{Exit: sandbox.Exit{TimedOut: true, Detail: "killed after wall timeout 6s"}, Problems: []string{"500"}}, runrecord.OutcomeTimeout, "last error: 500"},
		{"exit 0 without a turn", Evidence{}, runrecord.OutcomeAgentFailure, "without a finished turn"},
		{"crash with transport stderr", Evidence{Exit: sandbox.Exit{Code: 1}, StderrTail: "Error: connect ECONNREFUSED 127.0.0.1:1"}, runrecord.OutcomeInfraFailure, "ECONNREFUSED"},
		{"garbage stream (pi)", Evidence{Problems: []string{"Expected property name or '}' in JSON at position 1"}}, runrecord.OutcomeInfraFailure, "JSON at position"},
		{"garbage stream (claude)", Evidence{Exit: sandbox.Exit{Code: 1}, Problems: []string{"API returned an empty or malformed response (HTTP 200)"}}, runrecord.OutcomeInfraFailure, "malformed"},
		{"401 quoting an invalid_request_error body (pi 0.80+)", Evidence{Problems: []string{`401: {"code":"invalid_api_key","type":"invalid_request_error"}`}}, runrecord.OutcomeInfraFailure, "401"},
		{"400 quoting a 500 elsewhere stays the agent's", Evidence{Problems: []string{`400: {"type":"invalid_request_error","message":"retry after 500 ms"}`}}, runrecord.OutcomeAgentFailure, "400"},
		{"garbage stream (pi 1.6)", Evidence{Problems: []string{"Error reading response: malformed server-sent event JSON."}}, runrecord.OutcomeInfraFailure, "malformed"},
		{"crash", Evidence{Exit: sandbox.Exit{Code: 2}, StderrTail: "unknown option --frobnicate"}, runrecord.OutcomeAgentFailure, "frobnicate"},
	}
	for _, c := range cases {
		got, evidence := Classify(c.ev)
		if got != c.want || !strings.Contains(evidence, c.evidence) {
			t.Errorf("%s: %s %q, want %s containing %q", c.name, got, evidence, c.want, c.evidence)
		}
	}
}
