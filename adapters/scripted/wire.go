package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// sse writes server-sent events and flushes each one.
type sse struct {
	w   http.ResponseWriter
	seq int
	err error
	// delay is waited before every event after the first (a slow model).
	delay  time.Duration
	sent   bool
	closed <-chan struct{}
}

func (s *sse) pace() {
	if s.delay > 0 && s.sent && s.err == nil {
		select {
		case <-time.After(s.delay):
		case <-s.closed:
		}
	}
	s.sent = true
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes "event: NAME" (when name is set) and the JSON data.
func (s *sse) event(name string, data map[string]any) {
	s.pace()
	if s.err != nil {
		return
	}
	if name != "" && s.withSeq(name) {
		data["sequence_number"] = s.seq
		s.seq++
	}
	b, err := json.Marshal(data)
	if err != nil {
		s.err = err
		return
	}
	if name != "" {
		_, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	} else {
		_, s.err = fmt.Fprintf(s.w, "data: %s\n\n", b)
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// withSeq: only Responses events carry sequence numbers.
func (s *sse) withSeq(name string) bool { return len(name) > 9 && name[:9] == "response." }

func (s *sse) raw(line string) {
	s.pace()
	if s.err != nil {
		return
	}
	_, s.err = fmt.Fprint(s.w, line)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func streamReply(w http.ResponseWriter, req request, rep reply, id string, closed <-chan struct{}) error {
	s := newSSE(w)
	s.delay, s.closed = rep.delay, closed
	switch req.api {
	case APIResponses:
		streamResponses(s, req, rep, id)
	case APIChat:
		streamChat(s, req, rep, id)
	case APIAnthropic:
		streamAnthropic(s, req, rep, id)
	}
	return s.err
}

// streamStart sends only the opening events of a stream (for stall faults).
func streamStart(w http.ResponseWriter, req request, id string) {
	s := newSSE(w)
	switch req.api {
	case APIResponses:
		resp := responseObject(req, id, "in_progress", []any{}, nil)
		s.event("response.created", map[string]any{"type": "response.created", "response": resp})
		s.event("response.in_progress", map[string]any{"type": "response.in_progress", "response": resp})
	case APIChat:
		s.event("", chatChunk(req, id, map[string]any{"role": "assistant", "content": ""}, nil))
	case APIAnthropic:
		s.event("message_start", map[string]any{"type": "message_start", "message": anthropicMessage(req, id, []any{}, nil, Usage{})})
	}
}

// ---- OpenAI Responses ----

func responseObject(req request, id, status string, output []any, usage map[string]any) map[string]any {
	o := map[string]any{
		"id": "resp_" + id, "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": req.model, "output": output,
		"metadata": map[string]any{"served_by": Marker},
		"usage":    nil,
	}
	if usage != nil {
		o["usage"] = usage
	}
	return o
}

func responsesUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":          u.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": u.Cached},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens":          u.Input + u.Output,
	}
}

func responsesItem(rep reply, id string, done bool) map[string]any {
	status := "in_progress"
	if done {
		status = "completed"
	}
	if rep.toolName != "" {
		args := ""
		if done {
			args = rep.args
		}
		item := map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id,
			"name": rep.toolName, "arguments": args, "status": status}
		if rep.namespace != "" {
			item["namespace"] = rep.namespace
		}
		return item
	}
	content := []any{}
	if done {
		content = append(content, map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}})
	}
	return map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": status, "content": content}
}

func streamResponses(s *sse, req request, rep reply, id string) {
	resp := responseObject(req, id, "in_progress", []any{}, nil)
	s.event("response.created", map[string]any{"type": "response.created", "response": resp})
	s.event("response.in_progress", map[string]any{"type": "response.in_progress", "response": resp})
	s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": responsesItem(rep, id, false)})
	if rep.toolName != "" {
		itemID := "fc_" + id
		s.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "item_id": itemID, "output_index": 0, "delta": rep.args})
		s.event("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done", "item_id": itemID, "output_index": 0, "name": rep.toolName, "arguments": rep.args})
	} else {
		itemID := "msg_" + id
		part := func(text string) map[string]any {
			return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		}
		s.event("response.content_part.added", map[string]any{"type": "response.content_part.added", "item_id": itemID, "output_index": 0, "content_index": 0, "part": part("")})
		s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": itemID, "output_index": 0, "content_index": 0, "delta": rep.text, "logprobs": []any{}})
		s.event("response.output_text.done", map[string]any{"type": "response.output_text.done", "item_id": itemID, "output_index": 0, "content_index": 0, "text": rep.text, "logprobs": []any{}})
		s.event("response.content_part.done", map[string]any{"type": "response.content_part.done", "item_id": itemID, "output_index": 0, "content_index": 0, "part": part(rep.text)})
	}
	item := responsesItem(rep, id, true)
	s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	s.event("response.completed", map[string]any{"type": "response.completed",
		"response": responseObject(req, id, "completed", []any{item}, responsesUsage(rep.usage))})
}

// ---- OpenAI Chat Completions ----

func chatChunk(req request, id string, delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": time.Now().Unix(),
		"model": req.model, "system_fingerprint": "hoh-scripted-test-double",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

func chatUsage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens":             u.Input,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.Cached},
		"completion_tokens":         u.Output,
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens":              u.Input + u.Output,
	}
}

func streamChat(s *sse, req request, rep reply, id string) {
	s.event("", chatChunk(req, id, map[string]any{"role": "assistant", "content": ""}, nil))
	finish := "stop"
	if rep.toolName != "" {
		finish = "tool_calls"
		s.event("", chatChunk(req, id, map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_" + id, "type": "function",
			"function": map[string]any{"name": rep.toolName, "arguments": ""}}}}, nil))
		s.event("", chatChunk(req, id, map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "function": map[string]any{"arguments": rep.args}}}}, nil))
	} else {
		s.event("", chatChunk(req, id, map[string]any{"content": rep.text}, nil))
	}
	last := chatChunk(req, id, map[string]any{}, finish)
	if req.includeUsage {
		s.event("", last)
		u := chatChunk(req, id, nil, nil)
		u["choices"] = []any{}
		u["usage"] = chatUsage(rep.usage)
		s.event("", u)
	} else {
		// Without include_usage the usage rides on the finish chunk, as
		// several OpenAI-compatible servers do.
		last["usage"] = chatUsage(rep.usage)
		s.event("", last)
	}
	s.raw("data: [DONE]\n\n")
}

// ---- Anthropic Messages ----

func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.Input - u.Cached,
		"cache_read_input_tokens":     u.Cached,
		"cache_creation_input_tokens": 0,
		"output_tokens":               u.Output,
	}
}

func anthropicMessage(req request, id string, content []any, stop any, u Usage) map[string]any {
	return map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": req.model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage(u),
	}
}

func anthropicBlock(rep reply, id string, done bool) map[string]any {
	if rep.toolName != "" {
		input := map[string]any{}
		if done {
			_ = json.Unmarshal([]byte(rep.args), &input)
		}
		return map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": rep.toolName, "input": input}
	}
	text := ""
	if done {
		text = rep.text
	}
	return map[string]any{"type": "text", "text": text}
}

func streamAnthropic(s *sse, req request, rep reply, id string) {
	start := rep.usage
	start.Output = 1 // the real API reports a start-of-stream snapshot here
	s.event("message_start", map[string]any{"type": "message_start", "message": anthropicMessage(req, id, []any{}, nil, start)})
	s.event("ping", map[string]any{"type": "ping"})
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": anthropicBlock(rep, id, false)})
	stop := "end_turn"
	if rep.toolName != "" {
		stop = "tool_use"
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": rep.args}})
	} else {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": rep.text}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": anthropicUsage(rep.usage)})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// ---- non-streaming answers and errors ----

func finalObject(req request, rep reply, id string) map[string]any {
	switch req.api {
	case APIResponses:
		return responseObject(req, id, "completed", []any{responsesItem(rep, id, true)}, responsesUsage(rep.usage))
	case APIChat:
		msg := map[string]any{"role": "assistant", "content": nil}
		finish := "stop"
		if rep.toolName != "" {
			finish = "tool_calls"
			msg["tool_calls"] = []any{map[string]any{"id": "call_" + id, "type": "function",
				"function": map[string]any{"name": rep.toolName, "arguments": rep.args}}}
		} else {
			msg["content"] = rep.text
		}
		return map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion", "created": time.Now().Unix(),
			"model": req.model, "system_fingerprint": "hoh-scripted-test-double",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   chatUsage(rep.usage),
		}
	default:
		stop := "end_turn"
		if rep.toolName != "" {
			stop = "tool_use"
		}
		return anthropicMessage(req, id, []any{anthropicBlock(rep, id, true)}, stop, rep.usage)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with the API's native error body.
func writeError(w http.ResponseWriter, api string, status int, msg string) {
	if api == APIAnthropic {
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		return
	}
	typ := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
		429: "rate_limit_exceeded"}[status]
	if typ == "" {
		typ = "server_error"
	}
	code := map[int]any{401: "invalid_api_key", 429: "rate_limit_exceeded"}[status]
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}
