// Package classify decides how a coding-agent CLI invocation ended
// (completed, agent failure, timeout, infrastructure failure) from evidence
// the adapters collect: the exit, whether the CLI reported a finished turn,
// the error messages it printed. The exit code alone is not enough: Pi exits
// 0 when the model API failed, Claude Code exits 0 when a tool was denied.
// Every CLI goes through Classify; what differs between CLIs is data in the
// pattern tables below, each row saying whose message it is.
package classify

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// Evidence is what an adapter observed about one invocation.
type Evidence struct {
	Exit sandbox.Exit
	// Completed: the CLI reported a finished turn (result event, agent_end
	// with a normal stop, turn.completed, ...).
	Completed bool
	// Problems are failure messages from the event stream, oldest first
	// (API errors, failed turns, denied tools): any of them fails the
	// invocation.
	Problems []string
	// Notices are error messages the CLI printed while it went on working
	// (Codex's error events: retries, warnings), oldest first. They do not
	// fail a finished turn, but explain one that did not finish.
	Notices []string
	// StderrTail is the end of the CLI's stderr.
	StderrTail string
}

// infraPatterns match evidence of a failure outside the agent: provider 5xx,
// rate limits, authentication, and transport (connection refused, DNS, TLS,
// reset) or stream breakage, as any of the CLIs words it.
var infraPatterns = []string{
	// HTTP status: Claude's "API Error: 500", OpenCode's "(status 500)", Pi's "500 Internal".
	`status(code)?["':= ]{0,3}(5\d\d|401|403|429)\b`, `^\s*(5\d\d|401|403|429)\b`,
	`\b(5\d\d|401|403|429) (internal|bad gateway|service|gateway|unauthori|forbidden|too many)`,
	`internal server error`, `bad gateway`, `service unavailable`, `gateway time-?out`, `server_error`,
	`api_error`, `overloaded`,
	`experiencing high demand`, // Codex renders a provider 5xx so, without the status
	`unauthori[sz]ed`, `invalid_api_key`, `authentication`, `forbidden`, `permission_error`, `invalid x-api-key`,
	`too many requests`, `rate.?limit`, `quota`,
	// Transport: refused, reset, DNS, TLS; Rust (Codex), Node (the others).
	`stream disconnected`, `stream error`, `error sending request`, `connection (refused|reset|closed|error|failed)`,
	`econnrefused`, `econnreset`, `enotfound`, `eai_again`, `enetunreach`, `ehostunreach`, `unreachable`, `etimedout`,
	`socket hang up`, `fetch failed`, `network error`, `unable to connect`, `waiting for network`,
	`cannot connect to api`, `connection was closed unexpectedly`, // OpenCode (Bun's fetch)
	`dns error`, `failed to lookup address`, `name resolution`, `getaddrinfo`, `could not resolve`, `no such host`,
	`\btls\b`, `\bssl\b`, `certificate`, `handshake`,
	`terminated`, `premature close`,
	`transport error`, `timed out`, `broken pipe`, `unexpected eof`, `idle timeout`, `failed to parse (sse|event)`,
	`unexpected token`, `invalid json`, `json parse`, `in JSON at position`, `malformed (response|sse|server-sent event|event|json|stream)`,
}

// statusPatterns: the message leads with (or names) an infrastructure HTTP
// status. That outranks the body it quotes: OpenAI answers a bad key with
// 401 and type invalid_request_error, which Pi 0.80 and later print in full.
var statusPatterns = []string{`^\s*(5\d\d|401|403|429)\b`, `status(code)?["':= ]{0,3}(5\d\d|401|403|429)\b`}

// rejectedPatterns: the provider refused the request itself (HTTP 400
// class), which hoh counts against the agent (context too long, malformed
// history); it takes precedence over every infra pattern. Codex passes the
// body through without the status code.
var rejectedPatterns = []string{`invalid_request_error`, `\b400\b`, `bad request`}

// harmlessPatterns are error messages that report nothing wrong.
var harmlessPatterns = []string{
	`model metadata for .* not found`, // Codex: a model it has no metadata for, before every turn
}

var (
	infra    = compile(infraPatterns)
	rejected = compile(rejectedPatterns)
	harmless = compile(harmlessPatterns)
	status   = compile(statusPatterns)
)

func compile(patterns []string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + strings.Join(patterns, "|"))
}

// IsInfra reports whether msg looks like a provider or transport failure
// (and not a rejected request, unless its status says otherwise).
func IsInfra(msg string) bool {
	return status.MatchString(msg) || (infra.MatchString(msg) && !rejected.MatchString(msg))
}

// Classify turns evidence into an outcome and an evidence string.
func Classify(e Evidence) (runrecord.Outcome, string) {
	var messages []string // notices, then problems: a failed turn is the last word
	for _, m := range append(append([]string(nil), e.Notices...), e.Problems...) {
		if !harmless.MatchString(m) {
			messages = append(messages, m)
		}
	}
	if e.Exit.TimedOut || e.Exit.Idle {
		evidence := e.Exit.Detail
		if len(messages) > 0 {
			evidence += "; last error: " + messages[len(messages)-1]
		}
		return runrecord.OutcomeTimeout, evidence
	}
	if e.Exit.Code == 0 && e.Completed && !anyUnharmed(e.Problems) {
		return runrecord.OutcomeCompleted, ""
	}
	for i := len(messages) - 1; i >= 0; i-- {
		if IsInfra(messages[i]) {
			return runrecord.OutcomeInfraFailure, "provider or transport failure: " + messages[i]
		}
	}
	if len(messages) > 0 {
		last := messages[len(messages)-1]
		if rejected.MatchString(last) {
			return runrecord.OutcomeAgentFailure, "provider rejected the request (HTTP 400 class): " + last
		}
		return runrecord.OutcomeAgentFailure, last
	}
	// Nothing in the events explains the end: the CLI itself failed (bad
	// config, crash, no turn at all). Its stderr is the evidence.
	evidence := fmt.Sprintf("exit code %d without a turn result", e.Exit.Code)
	if e.Exit.Code == 0 {
		evidence = "exit 0 without a finished turn"
	}
	if e.Exit.Detail != "" {
		evidence += " (" + e.Exit.Detail + ")"
	}
	if e.StderrTail != "" {
		evidence += "; stderr: " + LastLines(e.StderrTail, 5)
	}
	if IsInfra(e.StderrTail) {
		return runrecord.OutcomeInfraFailure, evidence
	}
	return runrecord.OutcomeAgentFailure, evidence
}

func anyUnharmed(list []string) bool {
	for _, m := range list {
		if !harmless.MatchString(m) {
			return true
		}
	}
	return false
}

// LastLines joins the last n non-empty lines of s with " | ".
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
