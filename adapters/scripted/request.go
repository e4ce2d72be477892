package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
)

// API names, as in harness.Provider.API.
const (
	APIResponses = "responses"
	APIChat      = "chat"
	APIAnthropic = "anthropic"
)

// request is the part of an API request the script logic needs.
type request struct {
	api          string
	stream       bool
	includeUsage bool // Chat: stream_options.include_usage
	model        string
	system       string
	userText     string // newest user message; "" when there is none
	toolResults  int    // tool results after the newest user message
	tools        []tool
}

// tool is one advertised function tool.
type tool struct {
	name string
	// namespace is the Responses namespace tool it was advertised in
	// (Codex groups each MCP server's tools so), or "".
	namespace string
	props     map[string]map[string]any // property name -> its JSON schema
}

func (t tool) has(prop string) bool { _, ok := t.props[prop]; return ok }

func (t tool) propType(prop string) string {
	s, _ := t.props[prop]["type"].(string)
	return s
}

func parseRequest(api string, body []byte) (request, error) {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return request{}, fmt.Errorf("request body is not a JSON object: %w", err)
	}
	r := request{api: api}
	r.stream, _ = raw["stream"].(bool)
	r.model, _ = raw["model"].(string)
	switch api {
	case APIResponses:
		parseResponses(&r, raw)
	case APIChat:
		parseChat(&r, raw)
	case APIAnthropic:
		parseAnthropic(&r, raw)
	}
	return r, nil
}

// textOf flattens a message content: a string or a list of parts with text.
func textOf(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func schemaProps(schema any) map[string]map[string]any {
	props := map[string]map[string]any{}
	m, _ := schema.(map[string]any)
	pm, _ := m["properties"].(map[string]any)
	for k, v := range pm {
		vm, _ := v.(map[string]any)
		props[k] = vm
	}
	return props
}

func parseResponses(r *request, raw map[string]any) {
	var system []string
	if s, ok := raw["instructions"].(string); ok && s != "" {
		system = append(system, s)
	}
	switch in := raw["input"].(type) {
	case string:
		r.userText = in
	case []any:
		for _, it := range in {
			item, _ := it.(map[string]any)
			typ, _ := item["type"].(string)
			role, _ := item["role"].(string)
			switch {
			case typ == "function_call_output" || typ == "custom_tool_call_output":
				r.toolResults++
			case typ == "message" || (typ == "" && role != ""):
				switch role {
				case "user":
					r.userText = textOf(item["content"])
					r.toolResults = 0
				case "system", "developer":
					system = append(system, textOf(item["content"]))
				}
			}
		}
	}
	r.system = strings.Join(system, "\n")
	tools, _ := raw["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if tm["type"] == "namespace" {
			ns, _ := tm["name"].(string)
			sub, _ := tm["tools"].([]any)
			for _, st := range sub {
				sm, _ := st.(map[string]any)
				if name, _ := sm["name"].(string); sm["type"] == "function" {
					r.tools = append(r.tools, tool{name: name, namespace: ns, props: schemaProps(sm["parameters"])})
				}
			}
			continue
		}
		if tm["type"] != "function" {
			continue
		}
		name, _ := tm["name"].(string)
		r.tools = append(r.tools, tool{name: name, props: schemaProps(tm["parameters"])})
	}
}

func parseChat(r *request, raw map[string]any) {
	if so, ok := raw["stream_options"].(map[string]any); ok {
		r.includeUsage, _ = so["include_usage"].(bool)
	}
	var system []string
	msgs, _ := raw["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		switch mm["role"] {
		case "system", "developer":
			system = append(system, textOf(mm["content"]))
		case "user":
			r.userText = textOf(mm["content"])
			r.toolResults = 0
		case "tool", "function":
			r.toolResults++
		}
	}
	r.system = strings.Join(system, "\n")
	tools, _ := raw["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if tm["type"] != "function" {
			continue
		}
		fn, _ := tm["function"].(map[string]any)
		name, _ := fn["name"].(string)
		r.tools = append(r.tools, tool{name: name, props: schemaProps(fn["parameters"])})
	}
}

func parseAnthropic(r *request, raw map[string]any) {
	r.system = textOf(raw["system"])
	msgs, _ := raw["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "user" {
			continue
		}
		// A user message carrying tool_result blocks answers tool calls; it is
		// not a new instruction.
		results := 0
		if blocks, ok := mm["content"].([]any); ok {
			for _, b := range blocks {
				if bm, _ := b.(map[string]any); bm["type"] == "tool_result" {
					results++
				}
			}
		}
		if results > 0 {
			r.toolResults += results
			continue
		}
		r.userText = textOf(mm["content"])
		r.toolResults = 0
	}
	tools, _ := raw["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		// Anthropic custom tools have no type (or "custom"); server tools
		// (web_search_..., bash_2025...) are not ours to call.
		if typ, ok := tm["type"].(string); ok && typ != "custom" {
			continue
		}
		name, _ := tm["name"].(string)
		r.tools = append(r.tools, tool{name: name, props: schemaProps(tm["input_schema"])})
	}
}

func (r request) toolNames() []string {
	var names []string
	for _, t := range r.tools {
		names = append(names, t.name)
	}
	return names
}
