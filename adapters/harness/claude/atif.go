package claude

import (
	"encoding/json"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness/atif"
)

// Steps turns a stream-json run into ATIF agent steps: one per assistant
// message (its text, thinking and tool uses), each tool result the
// observation of the step that called it. Claude's per-message usage is a
// start-of-stream snapshot, so the run's total (the result event's, as
// ParseEvents reads it) is the metrics of the last step.
func Steps(raw []json.RawMessage) []atif.Step {
	var b atif.Builder
	byMessage := map[string]int{}
	for _, line := range raw {
		var e struct {
			Type      string `json:"type"`
			Timestamp string `json:"timestamp"`
			Message   *struct {
				ID      string          `json:"id"`
				Model   string          `json:"model"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil || e.Message == nil {
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(e.Message.Content, &blocks) != nil {
			continue
		}
		switch e.Type {
		case "assistant":
			i, ok := byMessage[e.Message.ID]
			if !ok || e.Message.ID == "" {
				i = b.Add(atif.Step{ModelName: e.Message.Model, Timestamp: e.Timestamp})
				byMessage[e.Message.ID] = i
			}
			s := &b.Steps[i]
			for _, c := range blocks {
				switch c.Type {
				case "text":
					s.Message = join(s.Message, c.Text)
				case "thinking":
					s.ReasoningContent = join(s.ReasoningContent, c.Thinking)
				case "tool_use":
					s.ToolCalls = append(s.ToolCalls, atif.ToolCall{ToolCallID: c.ID, FunctionName: c.Name, Arguments: atif.Arguments(c.Input)})
				}
			}
		case "user":
			for _, c := range blocks {
				if c.Type == "tool_result" {
					b.Observe(c.ToolUseID, resultText(c.Content))
				}
			}
		}
	}
	if last := b.Last(); last != nil {
		if u := ParseEvents(raw).Usage; u.Total > 0 {
			last.Metrics = atif.UsageMetrics(u)
			last.Extra = map[string]any{"metrics_scope": "invocation"}
		}
	}
	return b.Steps
}

// resultText is a tool result's content: a string, or the text of its
// blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var out []string
		for _, b := range blocks {
			if b.Text != "" {
				out = append(out, b.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	return string(raw)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n" + b
}
