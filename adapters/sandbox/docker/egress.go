package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The egress allowlist. The container has no route out (network none, or an
// internal network with its sidecars); its HTTP_PROXY / HTTPS_PROXY point at
// hoh-relay on a loopback port inside, which forwards to a unix socket in a
// bind-mounted host directory, where hoh serves an HTTP proxy that admits
// CONNECT tunnels and plain requests to the listed hosts only. The model
// relay is a separate socket and is always reachable.

// EgressSocketDir is the container path of the egress proxy's socket directory.
const EgressSocketDir = "/run/hoh-egress"

// DefaultEgressPort is the in-container loopback port of the egress proxy.
const DefaultEgressPort = 18081

// EgressSpec configures the allowlist of one container.
type EgressSpec struct {
	// Hosts are the admitted host names, compared case-insensitively; an
	// entry "*.example.com" or ".example.com" admits its subdomains too.
	Hosts []string
	// Binary is the static hoh-relay (FindRelayBinary).
	Binary string
	// Port is the in-container loopback port; default DefaultEgressPort.
	Port int
	// Direct are names reached without the proxy (the environment's
	// sidecars); loopback always is.
	Direct []string
	// Dial connects to an admitted host:port; default a net.Dialer. Tests
	// map names to loopback addresses with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Allows reports whether host (no port) is admitted.
func (s *EgressSpec) Allows(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range s.Hosts {
		a = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(a)), ".")
		switch {
		case a == h:
			return true
		case strings.HasPrefix(a, "*."):
			if strings.HasSuffix(h, a[1:]) {
				return true
			}
		case strings.HasPrefix(a, "."):
			if strings.HasSuffix(h, a) {
				return true
			}
		}
	}
	return false
}

type egressProxy struct {
	dir  string
	srv  *http.Server
	spec *EgressSpec
	once sync.Once

	mu     sync.Mutex
	denied []string
}

func (p *egressProxy) Close() {
	p.once.Do(func() {
		p.srv.Close()
		os.RemoveAll(p.dir)
	})
}

func (p *egressProxy) dial(ctx context.Context, addr string) (net.Conn, error) {
	if p.spec.Dial != nil {
		return p.spec.Dial(ctx, "tcp", addr)
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	return d.DialContext(ctx, "tcp", addr)
}

func (p *egressProxy) deny(w http.ResponseWriter, host string) {
	p.mu.Lock()
	if len(p.denied) < 100 {
		p.denied = append(p.denied, host)
	}
	p.mu.Unlock()
	http.Error(w, "hoh egress proxy: "+host+" is not in the task's allowed_hosts", http.StatusForbidden)
}

func (p *egressProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A client that half-closes after its request (nc, HTTP/1.0 tools)
	// cancels r's context: the upstream exchange must outlive that.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Hour)
	defer cancel()
	if r.Method == http.MethodConnect {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			http.Error(w, "hoh egress proxy: CONNECT needs host:port", http.StatusBadRequest)
			return
		}
		if !p.spec.Allows(host) {
			p.deny(w, host)
			return
		}
		up, err := p.dial(ctx, r.Host)
		if err != nil {
			http.Error(w, "hoh egress proxy: "+err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			up.Close()
			http.Error(w, "hoh egress proxy: cannot tunnel", http.StatusInternalServerError)
			return
		}
		c, buf, err := hj.Hijack()
		if err != nil {
			up.Close()
			return
		}
		io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
		go pipe(c, up, buf)
		return
	}
	if !r.URL.IsAbs() || r.URL.Hostname() == "" {
		http.Error(w, "hoh egress proxy: only proxy requests (absolute URLs) and CONNECT", http.StatusBadRequest)
		return
	}
	if !p.spec.Allows(r.URL.Hostname()) {
		p.deny(w, r.URL.Hostname())
		return
	}
	out := r.Clone(ctx)
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	tr := &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) }}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "hoh egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// pipe copies both ways between the client c (with bytes already buffered
// in rw) and the upstream up; a side that finishes sending half-closes the
// other, so an answer still on its way after the request ends arrives.
func pipe(c, up net.Conn, rw io.Reader) {
	defer c.Close()
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, rw); closeWrite(up); done <- struct{}{} }()
	go func() { io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

// EgressDenied lists the hosts the egress proxy refused so far (at most 100).
func (env *Environment) EgressDenied() []string {
	if env.egress == nil {
		return nil
	}
	env.egress.mu.Lock()
	defer env.egress.mu.Unlock()
	return append([]string(nil), env.egress.denied...)
}

func (env *Environment) egressPort() int {
	if env.spec.Egress.Port == 0 {
		return DefaultEgressPort
	}
	return env.spec.Egress.Port
}

// egressMounts starts the host-side proxy and returns its socket directory
// mount (and the relay binary's, when the model relay does not mount it).
func (env *Environment) egressMounts() ([]mountSpec, error) {
	es := env.spec.Egress
	if es.Binary == "" {
		return nil, errors.New("egress proxy needs the hoh-relay binary")
	}
	if _, err := os.Stat(es.Binary); err != nil {
		return nil, fmt.Errorf("relay binary: %w", err)
	}
	if env.egress == nil {
		// Under the relay's prefix, so a later run removes what a killed one left.
		dir, err := os.MkdirTemp("", RelayTempPrefix(env.c.RunID()))
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		sock := filepath.Join(dir, "egress.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		os.Chmod(sock, 0o777)
		p := &egressProxy{dir: dir, spec: es}
		p.srv = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
		env.egress = p
		go p.srv.Serve(ln)
	}
	ms := []mountSpec{bindMount(env.egress.dir, EgressSocketDir, true)}
	if env.spec.Relay == nil {
		ms = append(ms, bindMount(es.Binary, RelayBinPath, true))
	}
	return ms, nil
}

// egressEnv points the usual proxy variables at the in-container relay;
// loopback (the model relay) and the sidecars are reached directly.
func (env *Environment) egressEnv() []string {
	proxy := "http://127.0.0.1:" + strconv.Itoa(env.egressPort())
	direct := append([]string{"localhost", "127.0.0.1", "::1"}, env.spec.Egress.Direct...)
	np := strings.Join(direct, ",")
	return []string{"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "http_proxy=" + proxy, "https_proxy=" + proxy,
		"ALL_PROXY=" + proxy, "all_proxy=" + proxy, "NO_PROXY=" + np, "no_proxy=" + np}
}

func (env *Environment) startEgressRelay(ctx context.Context) error {
	return env.startRelayAt(ctx, "127.0.0.1:"+strconv.Itoa(env.egressPort()), EgressSocketDir+"/egress.sock")
}
