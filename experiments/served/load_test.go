package served

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/scripted"
)

// Under CPU load (a busy loop per CPU), streamed answers of the scripted
// TEST-DOUBLE provider pass through relays started and closed per attempt,
// as the runner does, every one complete: no fault injected, no
// disconnected stream, no error line in the relay's log.
func TestRelayStreamsCompleteUnderCPULoad(t *testing.T) {
	srv, err := scripted.Start(scripted.Script{Entries: []scripted.Entry{{Name: "any", Match: ".", Repeat: true,
		Steps: []scripted.Step{{Say: strings.Repeat("a long streamed answer ", 200)}}}}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for range runtime.NumCPU() * 2 {
		go func() {
			for ctx.Err() == nil {
				for i := 0; i < 1e6; i++ {
				}
			}
		}()
	}
	const attempts, clients, requests = 6, 3, 8
	var wg sync.WaitGroup
	errs := make(chan error, attempts*clients*requests)
	dir := t.TempDir()
	for a := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log := filepath.Join(dir, fmt.Sprintf("served-%d.jsonl", a))
			r, err := Start(srv.URL()+"/v1", log)
			if err != nil {
				errs <- err
				return
			}
			var cw sync.WaitGroup
			for c := range clients {
				cw.Add(1)
				go func() {
					defer cw.Done()
					client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
					for i := range requests {
						body := fmt.Sprintf(`{"model":"m","input":"attempt %d client %d turn %d","stream":true}`, a, c, i)
						resp, err := client.Post(r.BaseURL()+"/responses", "application/json", strings.NewReader(body))
						if err != nil {
							errs <- err
							continue
						}
						b, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), "response.completed") {
							errs <- fmt.Errorf("attempt %d client %d turn %d: status %d, %d bytes, %v", a, c, i, resp.StatusCode, len(b), err)
						}
					}
				}()
			}
			cw.Wait()
			r.Settle(5 * time.Second)
			r.Close()
			lines, _, err := Read(log)
			if err != nil {
				errs <- err
				return
			}
			for _, l := range lines {
				if !l.Complete || l.Status != 200 {
					errs <- fmt.Errorf("relay %d logged an incomplete response: %+v", a, l)
				}
			}
			if len(lines) != clients*requests {
				errs <- fmt.Errorf("relay %d logged %d responses, want %d", a, len(lines), clients*requests)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A provider that cuts a stream short: the relay's complaint goes to the
// file beside its log, not to hoh's terminal (os.Stderr).
func TestRelayErrorsGoBesideTheLogNotToTheTerminal(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, "data: {\"type\":\"response.created\"}\n\n")
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer up.Close()
	logPath := filepath.Join(t.TempDir(), File)
	r, err := Start(up.URL+"/v1", logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stderr := os.Stderr
	rd, wr, _ := os.Pipe()
	os.Stderr = wr
	resp, err := http.Post(r.BaseURL()+"/responses", "application/json", strings.NewReader(`{}`))
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	r.Settle(5 * time.Second)
	os.Stderr = stderr
	wr.Close()
	leaked, _ := io.ReadAll(rd)
	b, _ := os.ReadFile(logPath + ".errors")
	if !strings.Contains(string(b), "ReverseProxy read error during body copy") || len(leaked) > 0 {
		t.Errorf("errors file %q, stderr %q", b, leaked)
	}
}
