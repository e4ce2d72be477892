package environment

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// tlsBridge serves plain http on the host's loopback and forwards every
// request to an https provider. The container relay passes bytes through,
// so a container cannot speak TLS to 127.0.0.1 with the provider's
// certificate; the bridge terminates TLS on the host instead, and the agent
// still reaches the model endpoint and nothing else.
// bridgeTransport is the bridge's client transport; nil means
// http.DefaultTransport (tests swap in one that trusts their certificate).
var bridgeTransport http.RoundTripper

type tlsBridge struct {
	srv *http.Server
	ln  net.Listener
}

func startTLSBridge(upstream *url.URL) (*tlsBridge, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	origin := &url.URL{Scheme: upstream.Scheme, Host: upstream.Host}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(origin) // the request path already carries the base path
		},
		FlushInterval: -1, // stream SSE chunks as they arrive
		Transport:     bridgeTransport,
	}
	b := &tlsBridge{srv: &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}, ln: ln}
	go b.srv.Serve(ln)
	return b, nil
}

// Addr is the bridge's host:port on the loopback.
func (b *tlsBridge) Addr() string { return b.ln.Addr().String() }

func (b *tlsBridge) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return b.srv.Shutdown(ctx)
}
