// Package served is hoh's own view of the model traffic of a host trial: a
// reverse proxy on 127.0.0.1 in front of the provider that forwards every
// request unchanged and logs, per response, its status and the token usage
// found in its body (served.jsonl). What the provider served is then known
// without trusting a CLI's report, also for attempts that were killed.
package served

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// File is the name of the log in a trial directory.
const File = "served.jsonl"

// Line is one response the provider served.
type Line struct {
	Time   time.Time     `json:"time"`
	Path   string        `json:"path"`
	Status int           `json:"status"`
	Usage  harness.Usage `json:"usage"`
}

// Relay is a running proxy.
type Relay struct {
	base string
	srv  *http.Server
	ln   net.Listener
	log  string
	mu   sync.Mutex
}

// Start proxies to upstream (a provider base URL) and appends to logPath.
func Start(upstream, logPath string) (*Relay, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("served: provider base_url %q is not a URL", upstream)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{ln: ln, log: logPath}
	target := &url.URL{Scheme: u.Scheme, Host: u.Host}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = u.Host
		},
		FlushInterval: -1, // stream server-sent events as they come
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &meter{ReadCloser: resp.Body, done: func(usage harness.Usage) {
				r.record(Line{Time: time.Now().UTC(), Path: resp.Request.URL.Path, Status: resp.StatusCode, Usage: usage})
			}}
			return nil
		},
	}
	r.srv = &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}
	go r.srv.Serve(ln)
	r.base = (&url.URL{Scheme: "http", Host: ln.Addr().String(), Path: u.Path}).String()
	return r, nil
}

// BaseURL is upstream's base URL as served through the relay.
func (r *Relay) BaseURL() string { return r.base }

// Close stops the relay.
func (r *Relay) Close() error { return r.srv.Close() }

func (r *Relay) record(l Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = runrecord.Append(r.log, l)
}

// meter passes a response body through and reads the usage out of it: of
// a JSON body, or of each "data:" line of an event stream.
type meter struct {
	io.ReadCloser
	buf   bytes.Buffer
	usage harness.Usage
	once  sync.Once
	done  func(harness.Usage)
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.ReadCloser.Read(p)
	m.buf.Write(p[:n])
	m.scan(false)
	if err == io.EOF {
		m.finish()
	}
	return n, err
}

func (m *meter) Close() error {
	m.finish()
	return m.ReadCloser.Close()
}

func (m *meter) finish() {
	m.once.Do(func() {
		m.scan(true)
		m.done(m.usage)
	})
}

// scan consumes the complete lines in buf (all of it at the end).
func (m *meter) scan(all bool) {
	for {
		data := m.buf.Bytes()
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if all && len(data) > 0 {
				m.line(data)
				m.buf.Reset()
			}
			return
		}
		m.line(data[:i])
		m.buf.Next(i + 1)
	}
}

func (m *meter) line(b []byte) {
	b = bytes.TrimSpace(b)
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("data:")))
	if len(b) == 0 || b[0] != '{' {
		return
	}
	var o map[string]any
	if json.Unmarshal(b, &o) != nil {
		return
	}
	for _, u := range []any{o["usage"], dig(o, "response", "usage"), dig(o, "message", "usage")} {
		if um, ok := u.(map[string]any); ok {
			m.usage = maxUsage(m.usage, usageOf(um))
		}
	}
}

func dig(o map[string]any, keys ...string) any {
	var v any = o
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// usageOf maps the Responses, Chat Completions and Anthropic usage fields
// onto hoh's convention (Input counts cached reads too).
func usageOf(u map[string]any) harness.Usage {
	var x harness.Usage
	if _, anthropic := u["cache_read_input_tokens"]; anthropic {
		x.CachedInput = num(u["cache_read_input_tokens"])
		x.Input = num(u["input_tokens"]) + x.CachedInput + num(u["cache_creation_input_tokens"])
	} else {
		x.Input = num(u["input_tokens"]) + num(u["prompt_tokens"])
		x.CachedInput = num(dig(u, "input_tokens_details", "cached_tokens")) + num(dig(u, "prompt_tokens_details", "cached_tokens"))
	}
	x.Output = num(u["output_tokens"]) + num(u["completion_tokens"])
	x.Reasoning = num(dig(u, "output_tokens_details", "reasoning_tokens")) + num(dig(u, "completion_tokens_details", "reasoning_tokens"))
	return x
}

// maxUsage keeps each field's largest value: streams repeat or accumulate
// usage (Anthropic's message_delta carries the running output count).
func maxUsage(a, b harness.Usage) harness.Usage {
	a.Input, a.CachedInput = max(a.Input, b.Input), max(a.CachedInput, b.CachedInput)
	a.Output, a.Reasoning = max(a.Output, b.Output), max(a.Reasoning, b.Reasoning)
	a.Total = a.Input + a.Output
	return a
}

// Read sums a served.jsonl; a missing file is no traffic.
func Read(path string) ([]Line, harness.Usage, error) {
	var lines []Line
	var total harness.Usage
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, total, nil
	}
	if err != nil {
		return nil, total, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		var l Line
		if strings.TrimSpace(sc.Text()) == "" || json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // a line torn by a kill
		}
		lines = append(lines, l)
		total = total.Add(l.Usage)
	}
	return lines, total, sc.Err()
}
