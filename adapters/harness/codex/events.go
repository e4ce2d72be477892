package codex

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/runrecord"
)

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
	Item *eventItem `json:"item"`
}

// eventItem is an item.started or item.completed event's item.
type eventItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Message  string `json:"message"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	// AggregatedOutput is the command's stdout and stderr as Codex
	// recorded them (absent from older versions' events).
	AggregatedOutput *string `json:"aggregated_output"`
	Server           string  `json:"server"`
	Tool             string  `json:"tool"`
	// Arguments and Result are an mcp_tool_call's (Result the MCP
	// CallToolResult: content blocks).
	Arguments json.RawMessage `json:"arguments"`
	Result    *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Query   string `json:"query"`
	Changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// ParseEvents reads a `codex exec --json` stream. turn.failed messages are
// Problems; error events and error items are Notices (Codex reports retries
// and warnings through them and may still finish the turn).
func ParseEvents(raw []json.RawMessage) cliproc.Report {
	var rep cliproc.Report
	turnCompleted := false
	// Commands by item id: Codex 0.142 may end the turn without the
	// item.completed of a command it started, which still ran.
	commands := map[string]int{}
	for _, line := range raw {
		var e codexEvent
		if err := json.Unmarshal(line, &e); err != nil {
			continue
		}
		switch e.Type {
		case "thread.started":
			rep.SessionID = e.ThreadID
		case "turn.completed":
			turnCompleted = true
			if u := e.Usage; u != nil {
				// Codex reports input as sent (cached included) and output
				// with reasoning included: already the harness convention.
				// The figures are the thread's running total, so the last
				// event wins.
				rep.Usage = runrecord.Usage{
					Input: u.InputTokens, CachedInput: u.CachedInputTokens,
					Output: u.OutputTokens, Reasoning: u.ReasoningOutputTokens,
					Total: u.InputTokens + u.OutputTokens,
				}
			}
		case "turn.failed":
			msg := "turn failed"
			if e.Error != nil {
				msg = e.Error.Message
			}
			rep.Problems = append(rep.Problems, msg)
		case "error":
			rep.Notices = append(rep.Notices, e.Message)
		case "item.started":
			if it := e.Item; it != nil && it.Type == "command_execution" && it.ID != "" {
				commands[it.ID] = len(rep.Tools)
				rep.Tools = append(rep.Tools, runrecord.ToolCall{Name: "command_execution", Input: it.Command})
			}
		case "item.completed":
			it := e.Item
			if it == nil {
				continue
			}
			reportItem(&rep, it, commands)
		}
	}
	rep.Completed = turnCompleted
	return rep
}

// reportItem adds a completed item to rep: the final message, a tool call
// (a command replacing its item.started entry) or a notice.
func reportItem(rep *cliproc.Report, it *eventItem, commands map[string]int) {
	switch it.Type {
	case "agent_message":
		rep.FinalMessage = it.Text
	case "command_execution":
		call := runrecord.ToolCall{Name: "command_execution", Input: it.Command, ExitCode: it.ExitCode}
		if it.AggregatedOutput != nil {
			call.Output = harness.ToolOutput(*it.AggregatedOutput)
		}
		if i, ok := commands[it.ID]; ok {
			rep.Tools[i] = call
		} else {
			rep.Tools = append(rep.Tools, call)
		}
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Kind+" "+c.Path)
		}
		rep.Tools = append(rep.Tools, runrecord.ToolCall{Name: "file_change", Input: strings.Join(paths, ", ")})
	case "mcp_tool_call":
		call := runrecord.ToolCall{Name: "mcp:" + it.Server + "/" + it.Tool}
		if len(it.Arguments) > 0 && string(it.Arguments) != "null" {
			call.Input = string(it.Arguments)
		}
		if it.Result != nil {
			var text []string
			for _, c := range it.Result.Content {
				if c.Type == "text" {
					text = append(text, c.Text)
				}
			}
			call.Output = harness.ToolOutput(strings.Join(text, "\n"))
		}
		rep.Tools = append(rep.Tools, call)
	case "web_search":
		rep.Tools = append(rep.Tools, runrecord.ToolCall{Name: "web_search", Input: it.Query})
	case "error":
		rep.Notices = append(rep.Notices, it.Message)
	}
}

// Codex retries a connection it cannot open without end ("Reconnecting...
// waiting for network", with growing pauses), whatever request_max_retries
// says; hoh stops it after networkWaits such events in a row (about 10 s),
// so an unreachable provider is an infrastructure failure, not a wall
// timeout.
const networkWaits = 3

var networkWait = regexp.MustCompile(`(?i)reconnecting\.\.\. waiting for network`)

// StopWhenUnreachable is the Launch.Stop of a Codex run (a new counter per
// run).
func StopWhenUnreachable() func(line string) string {
	inARow := 0
	return func(line string) string {
		var e codexEvent
		if json.Unmarshal([]byte(line), &e) != nil {
			return ""
		}
		if e.Type != "error" || !networkWait.MatchString(e.Message) {
			inARow = 0
			return ""
		}
		if inARow++; inARow < networkWaits {
			return ""
		}
		return fmt.Sprintf("provider unreachable: Codex kept waiting for the network (%d attempts in a row; last: %s)", inARow, e.Message)
	}
}
