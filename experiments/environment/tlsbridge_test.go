package environment

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestTLSBridgeForwardsAndStreams(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: path=%s host=%s auth=%s\n\n", r.URL.Path, r.Host, r.Header.Get("Authorization"))
		w.(http.Flusher).Flush()
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer upstream.Close()
	bridgeTransport = upstream.Client().Transport
	defer func() { bridgeTransport = nil }()
	u, _ := url.Parse(upstream.URL + "/v1")
	b, err := startTLSBridge(u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	req, _ := http.NewRequest("POST", "http://"+b.Addr()+"/v1/responses", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	want := fmt.Sprintf("data: path=/v1/responses host=%s auth=Bearer k\n", u.Host)
	if line != want {
		t.Fatalf("got %q, want %q", line, want)
	}
}
