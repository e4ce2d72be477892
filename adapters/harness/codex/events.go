package codex

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
)

// events is what hoh keeps from a `codex exec --json` stream.
type events struct {
	raw           []json.RawMessage
	threadID      string
	finalMessage  string
	usage         harness.Usage
	tools         []harness.ToolCall
	turnCompleted int
	turnFailed    []string // turn.failed messages
	errors        []string // top-level error events and error items
}

type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Item *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Message  string `json:"message"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exit_code"`
		Server   string `json:"server"`
		Tool     string `json:"tool"`
		Query    string `json:"query"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

func parseEvents(lines []string) events {
	var ev events
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e codexEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			continue
		}
		ev.raw = append(ev.raw, json.RawMessage(line))
		switch e.Type {
		case "thread.started":
			ev.threadID = e.ThreadID
		case "turn.completed":
			ev.turnCompleted++
			if u := e.Usage; u != nil {
				// Codex reports input as sent (cached included) and output
				// with reasoning included: already the harness convention.
				// The figures are the thread's running total, so the last
				// event wins.
				ev.usage = (harness.Usage{
					Input: u.InputTokens, CachedInput: u.CachedInputTokens,
					Output: u.OutputTokens, Reasoning: u.ReasoningOutputTokens,
					Total: u.InputTokens + u.OutputTokens,
				})
			}
		case "turn.failed":
			msg := "turn failed"
			if e.Error != nil {
				msg = e.Error.Message
			}
			ev.turnFailed = append(ev.turnFailed, msg)
		case "error":
			ev.errors = append(ev.errors, e.Message)
		case "item.completed":
			it := e.Item
			if it == nil {
				continue
			}
			switch it.Type {
			case "agent_message":
				ev.finalMessage = it.Text
			case "command_execution":
				ev.tools = append(ev.tools, harness.ToolCall{Name: "command_execution", Input: it.Command, ExitCode: it.ExitCode})
			case "file_change":
				var paths []string
				for _, c := range it.Changes {
					paths = append(paths, c.Kind+" "+c.Path)
				}
				ev.tools = append(ev.tools, harness.ToolCall{Name: "file_change", Input: strings.Join(paths, ", ")})
			case "mcp_tool_call":
				ev.tools = append(ev.tools, harness.ToolCall{Name: "mcp:" + it.Server + "/" + it.Tool})
			case "web_search":
				ev.tools = append(ev.tools, harness.ToolCall{Name: "web_search", Input: it.Query})
			case "error":
				ev.errors = append(ev.errors, it.Message)
			}
		}
	}
	return ev
}

// Evidence of a failure outside the agent: provider 5xx, rate limits,
// authentication, transport and stream breakage.
// Codex renders a provider 5xx as "We're currently experiencing high demand".
var infraPatterns = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`status:? ?(5\d\d|401|403|429)\b`, `\b5\d\d (internal|bad gateway|service|gateway)`,
	`internal server error`, `bad gateway`, `service unavailable`, `gateway time-?out`, `server_error`, `experiencing high demand`,
	`unauthori[sz]ed`, `invalid_api_key`, `authentication`, `forbidden`,
	`too many requests`, `rate.?limit`, `quota`,
	`stream disconnected`, `stream error`, `error sending request`, `connection (refused|reset|closed)`,
	`transport error`, `timed out`, `broken pipe`, `unexpected eof`, `idle timeout`, `failed to parse (sse|event)`,
}, "|"))

// A provider that rejects the request itself (HTTP 400) reports this type;
// Codex passes the body through without the status code.
var rejectedPattern = regexp.MustCompile(`invalid_request_error`)

// Codex warns about unknown model metadata through an error item; it is not
// a failure.
var harmlessError = regexp.MustCompile(`(?i)model metadata for .* not found`)

// classify decides the outcome from the exit and the event stream.
func classify(exit sandbox.Exit, ev events, stderrTail string) (harness.Outcome, string) {
	var problems []string
	problems = append(problems, ev.turnFailed...)
	for _, e := range ev.errors {
		if !harmlessError.MatchString(e) {
			problems = append(problems, e)
		}
	}
	if exit.TimedOut || exit.Idle {
		evidence := exit.Detail
		if len(problems) > 0 {
			evidence += "; last error: " + problems[len(problems)-1]
		}
		return harness.OutcomeTimeout, evidence
	}
	if exit.Code == 0 && ev.turnCompleted > 0 && len(ev.turnFailed) == 0 {
		return harness.OutcomeCompleted, ""
	}
	if exit.Code == 0 && len(problems) == 0 && ev.turnCompleted == 0 {
		return harness.OutcomeAgentFailure, "exit 0 without a turn.completed event"
	}
	for i := len(problems) - 1; i >= 0; i-- {
		if infraPatterns.MatchString(problems[i]) {
			return harness.OutcomeInfraFailure, "provider or transport failure: " + problems[i]
		}
	}
	if len(problems) > 0 {
		last := problems[len(problems)-1]
		if rejectedPattern.MatchString(last) {
			return harness.OutcomeAgentFailure, "provider rejected the request (HTTP 400 class): " + last
		}
		return harness.OutcomeAgentFailure, last
	}
	// Nothing on stdout explains the exit: the CLI itself failed (bad
	// config, crash). Its stderr is the evidence.
	evidence := fmt.Sprintf("exit code %d without a turn result", exit.Code)
	if exit.Detail != "" {
		evidence += " (" + exit.Detail + ")"
	}
	if stderrTail != "" {
		evidence += "; stderr: " + lastLines(stderrTail, 5)
	}
	if infraPatterns.MatchString(stderrTail) {
		return harness.OutcomeInfraFailure, evidence
	}
	return harness.OutcomeAgentFailure, evidence
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
