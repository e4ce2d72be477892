package scripted

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// Options configure a Server.
type Options struct {
	// LogPath, when set, receives one JSON line per request (headers with
	// credentials redacted, the body, and what was served).
	LogPath string
	// Fault applies to every API request, before the script's own faults.
	Fault *Fault
	// Key, when set, is the only credential accepted (Authorization:
	// Bearer, x-api-key or api-key): anything else is answered 401, as a
	// real provider would answer a placeholder hoh's relay failed to swap.
	Key string
}

// Served describes one API request and what the test double answered.
type Served struct {
	Time     time.Time       `json:"time"`
	Method   string          `json:"method"`
	Path     string          `json:"path"`
	API      string          `json:"api,omitempty"`
	Entry    string          `json:"entry,omitempty"` // matched entry name
	Step     int             `json:"step"`            // step index answered (-1: none)
	Answer   string          `json:"answer"`          // "tool:NAME", "text", "plain", "fault:KIND", "error"
	UserText string          `json:"user_text,omitempty"`
	Usage    runrecord.Usage `json:"usage"` // usage reported to the client (zero unless a full answer)
	Status   int             `json:"status"`
	Error    string          `json:"error,omitempty"`
}

// PreflightMarker in the newest user message makes the server answer "OK"
// (after any fault in force, so a failing provider fails the preflight too).
const PreflightMarker = "hoh-preflight"

// Server is a running scripted provider.
type Server struct {
	script Script
	url    string
	http   *http.Server
	ln     net.Listener
	closed chan struct{}
	once   sync.Once

	mu        sync.Mutex
	served    []Served
	used      []bool         // entry i has served a conversation (non-repeat entries)
	convs     map[string]int // conversation key -> entry index
	faultUses map[*Fault]int
	fault     *Fault // server-wide
	log       *os.File
	seq       int
	key       string // Options.Key
}

// Start validates the script and serves it on 127.0.0.1 at a free port.
func Start(script Script, opts Options) (*Server, error) {
	if err := script.compile(); err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	if err := opts.Fault.validate(); err != nil {
		return nil, fmt.Errorf("scripted: options fault: %w", err)
	}
	s := &Server{
		script:    script,
		closed:    make(chan struct{}),
		used:      make([]bool, len(script.Entries)),
		convs:     map[string]int{},
		faultUses: map[*Fault]int{},
		fault:     opts.Fault,
		key:       opts.Key,
	}
	if s.fault == nil {
		s.fault = script.Fault
	}
	if opts.LogPath != "" {
		f, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("scripted: log: %w", err)
		}
		s.log = f
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scripted: listen: %w", err)
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.http = &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// URL is the server root, e.g. http://127.0.0.1:PORT (APIs live under /v1).
func (s *Server) URL() string { return s.url }

// Close stops the server and ends every hanging request.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closed)
		_ = s.http.Close()
		s.mu.Lock()
		if s.log != nil {
			_ = s.log.Close()
		}
		s.mu.Unlock()
	})
	return nil
}

// SetFault replaces the server-wide fault (nil clears it).
func (s *Server) SetFault(f *Fault) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
	return nil
}

// Served returns a copy of the per-request log so far.
func (s *Server) Served() []Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Served(nil), s.served...)
}

// TotalUsage sums the usage served so far.
func (s *Server) TotalUsage() runrecord.Usage {
	var u runrecord.Usage
	for _, r := range s.Served() {
		u = u.Add(r.Usage)
	}
	return u
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Hoh-Scripted", "test-double")
	rec := Served{Time: time.Now().UTC(), Method: r.Method, Path: r.URL.Path, Step: -1}
	body, err := readBody(r)
	defer func() { s.record(rec, r.Header, body) }()

	api, ok := routeAPI(w, r, &rec)
	if !ok {
		return
	}
	rec.API = api
	if k := s.key; k != "" && r.Header.Get("Authorization") != "Bearer "+k && r.Header.Get("x-api-key") != k && r.Header.Get("api-key") != k {
		rec.Answer, rec.Status, rec.Error = "error", http.StatusUnauthorized, "wrong credential"
		writeError(w, api, rec.Status, Marker+": invalid API key")
		return
	}
	if err != nil {
		rec.Answer, rec.Status, rec.Error = "error", http.StatusBadRequest, err.Error()
		writeError(w, api, rec.Status, Marker+": "+err.Error())
		return
	}
	req, err := parseRequest(api, body)
	if err != nil {
		rec.Answer, rec.Status, rec.Error = "error", http.StatusBadRequest, err.Error()
		writeError(w, api, rec.Status, Marker+": "+err.Error())
		return
	}
	rec.UserText = prefix(req.userText, 200)

	var slow time.Duration // a slow fault: the answer, streamed slowly
	if f := s.takeFault(s.currentFault()); f != nil {
		if slow = f.slowness(); slow == 0 {
			s.serveFault(w, r, req, f, &rec)
			return
		}
	}
	if strings.Contains(req.userText, PreflightMarker) {
		// hoh's preflight turn: answered without spending a script entry.
		rec.Answer = "preflight"
		s.serveReply(w, r, req, reply{text: "OK", usage: DefaultUsage, delay: slow}, &rec)
		return
	}
	idx, ok := s.match(req)
	if !ok {
		if len(req.tools) == 0 {
			rec.Answer = "plain"
			rep := reply{text: "Scripted reply (test double).", usage: DefaultUsage}
			s.serveReply(w, r, req, rep, &rec)
			return
		}
		rec.Answer, rec.Status = "error", http.StatusInternalServerError
		rec.Error = fmt.Sprintf("no script entry matches the newest user message %q", prefix(req.userText, 120))
		writeError(w, api, rec.Status, Marker+": "+rec.Error)
		return
	}
	s.serveEntry(w, r, req, idx, slow, &rec)
}

// serveEntry answers req with step k of script entry idx, k the number of
// tool results so far (the last step repeats): the entry's or step's fault
// if one is due, else its text or tool call. slow delays the reply.
func (s *Server) serveEntry(w http.ResponseWriter, r *http.Request, req request, idx int, slow time.Duration, rec *Served) {
	e := &s.script.Entries[idx]
	rec.Entry = e.Name
	k := min(req.toolResults, len(e.Steps)-1)
	rec.Step = k
	st := e.Steps[k]
	if f := s.takeFault(e.Fault); f != nil {
		if slow = f.slowness(); slow == 0 {
			s.serveFault(w, r, req, f, rec)
			return
		}
	}
	if f := s.takeFault(st.Fault); f != nil {
		if slow = f.slowness(); slow == 0 {
			s.serveFault(w, r, req, f, rec)
			return
		}
	}
	var err error
	rep := reply{usage: DefaultUsage, delay: slow}
	if e.Usage != nil {
		rep.usage = *e.Usage
	}
	if st.Usage != nil {
		rep.usage = *st.Usage
	}
	if st.Say != "" {
		rep.text = st.Say
		rec.Answer = "text"
	} else if st.Tool != nil {
		var t tool
		t, rep.args, err = namedTool(*st.Tool, req.tools)
		rep.toolName, rep.namespace = t.name, t.namespace
	} else {
		rep.toolName, rep.args, err = toolCall(st, req.tools)
	}
	if st.Say == "" {
		if err != nil {
			rec.Answer, rec.Status = "error", http.StatusInternalServerError
			rec.Error = fmt.Sprintf("entry %q step %d: %v", e.Name, k, err)
			writeError(w, rec.API, rec.Status, Marker+": "+rec.Error)
			return
		}
		rec.Answer = "tool:" + rep.toolName
		if rep.namespace != "" {
			rec.Answer = "tool:" + rep.namespace + "/" + rep.toolName
		}
	}
	s.serveReply(w, r, req, rep, rec)
}

// routeAPI answers the probes and unknown endpoints itself (ok false) and
// names the API of a model request; any path prefix is accepted.
func routeAPI(w http.ResponseWriter, r *http.Request, rec *Served) (api string, ok bool) {
	switch {
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && r.URL.Path == "/"):
		rec.Answer, rec.Status = "probe", http.StatusOK
		w.WriteHeader(http.StatusOK)
		return "", false
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		rec.Answer, rec.Status = "models", http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}})
		return "", false
	// Any path prefix: a stand-in for a real endpoint is configured with
	// that endpoint's path (https://api.minimax.io/anthropic -> /anthropic).
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		api = APIResponses
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		api = APIChat
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
		api = APIAnthropic
	default:
		rec.Answer, rec.Status = "error", http.StatusNotFound
		rec.Error = "no such endpoint"
		writeError(w, "", http.StatusNotFound, Marker+": no endpoint "+r.Method+" "+r.URL.Path)
		return "", false
	}
	return api, true
}

func (s *Server) serveReply(w http.ResponseWriter, r *http.Request, req request, rep reply, rec *Served) {
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("scripted%06d", s.seq)
	s.mu.Unlock()
	rec.Status = http.StatusOK
	if !req.stream {
		writeJSON(w, http.StatusOK, finalObject(req, rep, id))
	} else if err := streamReply(w, req, rep, id, s.closed); err != nil {
		rec.Error = err.Error()
		return
	}
	rec.Usage = toHarness(rep.usage)
}

func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, req request, f *Fault, rec *Served) {
	rec.Answer = "fault:" + f.Kind
	msg := f.Message
	if msg == "" {
		msg = fmt.Sprintf("%s: injected %s fault", Marker, f.Kind)
	}
	switch f.Kind {
	case FaultStatus:
		rec.Status = f.Status
		rec.Error = msg
		writeError(w, req.api, f.Status, msg)
	case FaultHang:
		rec.Status = 0
		s.wait(r)
	case FaultStall:
		rec.Status = http.StatusOK
		streamStart(w, req, "stalled")
		s.comments(w, r, f.KeepAlive, ": keep-alive\n\n")
	case FaultHeaders:
		rec.Status = http.StatusOK
		sseHeaders(w)
		s.wait(r)
	case FaultTrickle:
		rec.Status = http.StatusOK
		sseHeaders(w)
		// One byte at a time of comment lines: ":\n:\n..."
		s.comments(w, r, f.pause(), ":", "\n")
	case FaultKeepAlive:
		rec.Status = http.StatusOK
		sseHeaders(w)
		s.comments(w, r, f.pause(), ": keep-alive\n\n")
	case FaultGarbage:
		rec.Status = http.StatusOK
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: ???\ndata: {this is not json\n\ndata: \x00\x01garbage\n\n")
	}
}

// sseHeaders answers 200 as an event stream and sends the headers.
func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// comments writes the pieces in turn, one every every, until the client
// goes away or the server closes (every 0: none, just wait).
func (s *Server) comments(w http.ResponseWriter, r *http.Request, every time.Duration, pieces ...string) {
	if every <= 0 {
		s.wait(r)
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		case <-tick.C:
		}
		if _, err := io.WriteString(w, pieces[i%len(pieces)]); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// wait blocks until the client goes away or the server closes.
func (s *Server) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closed:
	}
}

func (s *Server) currentFault() *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fault
}

// takeFault returns f if it still applies and counts one use.
func (s *Server) takeFault(f *Fault) *Fault {
	if f == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Count > 0 && s.faultUses[f] >= f.Count {
		return nil
	}
	s.faultUses[f]++
	return f
}

// match finds the entry of the request's conversation, assigning the next
// unused matching entry to a conversation seen for the first time.
func (s *Server) match(req request) (int, bool) {
	key := req.api + "\x00" + req.userText
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.convs[key]; ok {
		return i, true
	}
	for i := range s.script.Entries {
		e := &s.script.Entries[i]
		if s.used[i] && !e.Repeat {
			continue
		}
		if !e.match.MatchString(req.userText) {
			continue
		}
		if e.system != nil && !e.system.MatchString(req.system) {
			continue
		}
		s.used[i] = true
		s.convs[key] = i
		return i, true
	}
	return 0, false
}

func (s *Server) record(rec Served, h http.Header, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served = append(s.served, rec)
	if s.log == nil {
		return
	}
	headers := map[string]string{}
	for k, v := range h {
		switch strings.ToLower(k) {
		case "authorization", "x-api-key", "proxy-authorization", "cookie":
			headers[k] = "[REDACTED]"
		default:
			headers[k] = strings.Join(v, ", ")
		}
	}
	line := map[string]any{"note": Marker, "served": rec, "headers": headers}
	if json.Valid(body) {
		line["body"] = json.RawMessage(body)
	} else if len(body) > 0 {
		line["body_text"] = prefix(string(body), 4096)
	}
	b, err := json.Marshal(line)
	if err == nil {
		_, _ = s.log.Write(append(b, '\n'))
	}
}

func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	var rd io.Reader = io.LimitReader(r.Body, 256<<20)
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		raw, err := io.ReadAll(rd)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return raw, fmt.Errorf("bad gzip body: %w", err)
		}
		rd = zr
	default:
		raw, _ := io.ReadAll(rd)
		return raw, errors.New("unsupported Content-Encoding " + enc)
	}
	return io.ReadAll(rd)
}

func toHarness(u Usage) runrecord.Usage {
	return runrecord.Usage{Input: u.Input, CachedInput: u.Cached, Output: u.Output, Reasoning: u.Reasoning, Total: u.Input + u.Output}
}

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
