package served

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/runrecord"
)

// Through the relay, the scripted TEST-DOUBLE provider answers each API,
// streamed and not; the relay reads from the bodies exactly the usage the
// provider reports serving.
func TestRelayCountsWhatEachAPIServed(t *testing.T) {
	usage := &scripted.Usage{Input: 1000, Cached: 200, Output: 50, Reasoning: 10}
	srv, err := scripted.Start(scripted.Script{Entries: []scripted.Entry{{Name: "any", Match: ".", Repeat: true, Usage: usage, Steps: []scripted.Step{{Say: "hello"}}}}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	log := filepath.Join(t.TempDir(), File)
	r, err := Start(srv.URL()+"/v1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bodies := map[string]string{
		"/responses":        `{"model":"m","input":"say hi %d","stream":%s}`,
		"/chat/completions": `{"model":"m","messages":[{"role":"user","content":"say hi %d"}],"stream":%s}`,
		"/messages":         `{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"say hi %d"}],"stream":%s}`,
	}
	n := 0
	for path, body := range bodies {
		for _, stream := range []string{"true", "false"} {
			n++
			b := strings.Replace(strings.Replace(body, "%d", string(rune('a'+n)), 1), "%s", stream, 1)
			resp, err := http.Post(r.BaseURL()+path, "application/json", strings.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s stream=%s: status %d", path, stream, resp.StatusCode)
			}
		}
	}
	lines, total, err := Read(log)
	if err != nil || len(lines) != 6 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	want := srv.TotalUsage()
	if total.Input != want.Input || total.CachedInput != want.CachedInput || total.Output != want.Output || total.Total != want.Total || want.Input != 6000 {
		t.Errorf("relay counted %+v, provider served %+v", total, want)
	}
	for _, l := range lines {
		w := runrecord.Usage{Input: 1000, CachedInput: 200, Output: 50, Reasoning: 10, Total: 1050}
		if strings.HasSuffix(l.Path, "/messages") {
			w.Reasoning = 0 // the Anthropic API reports no reasoning count
		}
		if l.Usage != w {
			t.Errorf("%s: %+v", l.Path, l.Usage)
		}
	}
}

// Each response is logged with the attempt that was current when its
// request arrived; a provider that does not answer is logged as a 502 for
// that attempt, so Answered tells the attempts apart.
func TestRelayNamesTheAttemptOfEachResponse(t *testing.T) {
	srv, err := scripted.Start(scripted.Script{Entries: []scripted.Entry{{Name: "any", Match: ".", Repeat: true, Usage: &scripted.Usage{Input: 10, Output: 2}, Steps: []scripted.Step{{Say: "hi"}}}}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), File)
	r, err := Start(srv.URL()+"/v1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	post := func() {
		resp, err := http.Post(r.BaseURL()+"/responses", "application/json", strings.NewReader(`{"model":"m","input":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	r.SetAttempt("iter-01/planner/attempt-1")
	post()
	post()
	r.SetAttempt("iter-01/developer/attempt-1")
	post()
	r.Settle(time.Second)
	srv.Close() // the provider dies: the next attempt gets no answer
	r.SetAttempt("iter-01/developer/attempt-2")
	post()
	r.Settle(time.Second)
	lines, _, err := Read(log)
	if err != nil || len(lines) != 4 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	by := ByAttempt(lines)
	if by["iter-01/planner/attempt-1"].Total != 24 || by["iter-01/developer/attempt-1"].Total != 12 || by["iter-01/developer/attempt-2"].Total != 0 {
		t.Errorf("usage by attempt %+v", by)
	}
	if lines[3].Status != http.StatusBadGateway || lines[3].Attempt != "iter-01/developer/attempt-2" {
		t.Errorf("unanswered request logged as %+v", lines[3])
	}
	for attempt, want := range map[string]bool{"iter-01/developer/attempt-1": true, "iter-01/developer/attempt-2": false} {
		if got, err := Answered(log, attempt, time.Time{}); got != want || err != nil {
			t.Errorf("Answered(%s) = %v %v, want %v", attempt, got, err, want)
		}
	}
}

// A provider that keeps the client waiting without a byte until it gives
// up is logged as StatusClientGone with no byte and its silence: the
// invocation had no model turn, and the cause is the provider's silence.
func TestProviderSilentUntilTheClientGivesUp(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	log := filepath.Join(t.TempDir(), File)
	r, err := Start(hang.URL+"/v1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetAttempt("iter-01/developer/attempt-1")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.BaseURL()+"/responses", strings.NewReader(`{}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the hanging provider answered")
	}
	r.Settle(2 * time.Second)
	lines, _, err := Read(log)
	if err != nil || len(lines) != 1 || lines[0].Status != StatusClientGone || lines[0].Bytes != 0 || lines[0].FirstByteMS != -1 || lines[0].SilentMS < 250 {
		t.Fatalf("lines %+v, %v: want one %d without a byte, silent ~300ms", lines, err, StatusClientGone)
	}
	tr, err := Of(log, "iter-01/developer/attempt-1", time.Time{})
	if err != nil || tr.Requests != 1 || tr.Answered != 0 || tr.Silent != 1 {
		t.Fatalf("traffic %+v, %v", tr, err)
	}
	if cause, ev := tr.NoTurn(time.Minute); cause != CauseSilent || !strings.Contains(ev, "without a byte") {
		t.Errorf("NoTurn = %q %q", cause, ev)
	}
}

// The relay swaps a CLI's placeholder credential for the real key on the
// way out, in every header and the query; the provider never sees the
// placeholder, and a request without the placeholder gets no key.
func TestRelaySwapsThePlaceholderForTheKey(t *testing.T) {
	var seen []http.Header
	var queries []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		queries = append(queries, r.URL.RawQuery)
		io.WriteString(w, "{}")
	}))
	defer up.Close()
	ph, key := NewPlaceholder(), "sk-real-key-4711"
	if ph == NewPlaceholder() || !strings.HasPrefix(ph, "hoh-placeholder-") {
		t.Fatalf("placeholders are not fresh: %s", ph)
	}
	r, err := StartWith(up.URL+"/v1", filepath.Join(t.TempDir(), File), Options{Keys: map[string]string{ph: key}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, h := range []map[string]string{{"Authorization": "Bearer " + ph}, {"x-api-key": ph}, {"api-key": "other"}} {
		req, _ := http.NewRequest("POST", r.BaseURL()+"/responses?key="+ph, strings.NewReader("{}"))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(seen) != 3 || seen[0].Get("Authorization") != "Bearer "+key || seen[1].Get("x-api-key") != key || seen[2].Get("api-key") != "other" {
		t.Fatalf("upstream saw %v", seen)
	}
	for i, h := range seen {
		for _, v := range h {
			if strings.Contains(strings.Join(v, " "), ph) {
				t.Errorf("request %d: the placeholder reached the provider: %v", i, h)
			}
		}
		if queries[i] != "key="+key {
			t.Errorf("request %d: query %q", i, queries[i])
		}
	}
}
