// Package classify decides how a coding-agent CLI invocation ended
// (completed, agent failure, timeout, infrastructure failure) from evidence
// the adapters collect: the exit, whether the CLI reported a finished turn,
// the error messages it printed. The exit code alone is not enough: Pi exits
// 0 when the model API failed, Claude Code exits 0 when a tool was denied.
package classify

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// Evidence is what an adapter observed about one invocation.
type Evidence struct {
	Exit sandbox.Exit
	// Completed: the CLI reported a finished turn (result event, agent_end
	// with a normal stop, ...).
	Completed bool
	// Problems are error messages from the event stream, oldest first
	// (API errors, failed turns, denied tools).
	Problems []string
	// StderrTail is the end of the CLI's stderr.
	StderrTail string
}

// infra matches evidence of a failure outside the agent: provider 5xx, rate
// limits, authentication, transport and stream breakage.
var infra = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`status(code)?["':= ]{0,3}(5\d\d|401|403|429)\b`, `^\s*(5\d\d|401|403|429)\b`, `\b(5\d\d|401|403|429) (internal|bad gateway|service|gateway|unauthori|forbidden|too many)`,
	`internal server error`, `bad gateway`, `service unavailable`, `gateway time-?out`, `server_error`, `api_error`, `overloaded`,
	`experiencing high demand`,
	`unauthori[sz]ed`, `invalid_api_key`, `authentication`, `forbidden`, `permission_error`, `invalid x-api-key`,
	`too many requests`, `rate.?limit`, `quota`,
	`stream disconnected`, `stream error`, `error sending request`, `connection (refused|reset|closed|error)`, `econnrefused`, `econnreset`,
	`socket hang up`, `fetch failed`, `network error`, `terminated`, `premature close`,
	`transport error`, `timed out`, `broken pipe`, `unexpected eof`, `idle timeout`, `failed to parse (sse|event)`,
	`unexpected token`, `invalid json`, `json parse`, `in JSON at position`, `malformed (response|sse|event|json|stream)`,
}, "|"))

// IsInfra reports whether msg looks like a provider or transport failure.
func IsInfra(msg string) bool { return infra.MatchString(msg) }

// rejected: the provider refused the request itself (HTTP 400 class), which
// hoh counts against the agent (context too long, malformed history).
var rejected = regexp.MustCompile(`(?i)invalid_request_error|\b400\b|bad request`)

// Classify turns evidence into an outcome and an evidence string.
func Classify(e Evidence) (harness.Outcome, string) {
	if e.Exit.TimedOut || e.Exit.Idle {
		evidence := e.Exit.Detail
		if len(e.Problems) > 0 {
			evidence += "; last error: " + e.Problems[len(e.Problems)-1]
		}
		return harness.OutcomeTimeout, evidence
	}
	if e.Exit.Code == 0 && e.Completed && len(e.Problems) == 0 {
		return harness.OutcomeCompleted, ""
	}
	for i := len(e.Problems) - 1; i >= 0; i-- {
		if IsInfra(e.Problems[i]) && !rejected.MatchString(e.Problems[i]) {
			return harness.OutcomeInfraFailure, "provider or transport failure: " + e.Problems[i]
		}
	}
	if len(e.Problems) > 0 {
		last := e.Problems[len(e.Problems)-1]
		if rejected.MatchString(last) {
			return harness.OutcomeAgentFailure, "provider rejected the request (HTTP 400 class): " + last
		}
		return harness.OutcomeAgentFailure, last
	}
	if e.Exit.Code == 0 && !e.Completed {
		evidence := "exit 0 without a finished turn"
		if e.StderrTail != "" {
			evidence += "; stderr: " + LastLines(e.StderrTail, 5)
		}
		if IsInfra(e.StderrTail) {
			return harness.OutcomeInfraFailure, evidence
		}
		return harness.OutcomeAgentFailure, evidence
	}
	// Nothing on stdout explains the exit: the CLI itself failed (bad config,
	// crash). Its stderr is the evidence.
	evidence := fmt.Sprintf("exit code %d without a turn result", e.Exit.Code)
	if e.Exit.Detail != "" {
		evidence += " (" + e.Exit.Detail + ")"
	}
	if e.StderrTail != "" {
		evidence += "; stderr: " + LastLines(e.StderrTail, 5)
	}
	if IsInfra(e.StderrTail) {
		return harness.OutcomeInfraFailure, evidence
	}
	return harness.OutcomeAgentFailure, evidence
}

// LastLines joins the last n non-empty lines of s with " | ".
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
