package docker

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"

	"github.com/hoh-research/hoh/adapters/sandbox"
)

func webService(name, wait string) Service {
	return Service{
		Name: name, Image: testImage, Wait: wait,
		Entrypoint: []string{"/bin/sh", "-c"},
		Cmd:        []string{"mkdir -p /www && echo " + name + "-ok > /www/index.html && exec httpd -f -p 8000 -h /www"},
		Healthcheck: &container.HealthConfig{
			Test:     []string{"CMD-SHELL", "wget -q -O /dev/null http://127.0.0.1:8000/"},
			Interval: 300 * time.Millisecond, Timeout: 2 * time.Second, Retries: 30,
		},
	}
}

func countLabelled(t *testing.T, c *Client) (containers, networks int) {
	t.Helper()
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", LabelRun+"="+c.RunID()))
	cs, err := c.API.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.API.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs), len(ns)
}

// Sidecars start first (the healthy one waited for), are reachable by
// service name from the task container on an internal network of the
// environment's own, and go with the environment.
func TestServicesReachableThenRemoved(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	env, err := c.Start(ctx, Spec{Image: testImage, Services: &Services{
		MainAlias: "main", List: []Service{webService("db", "healthy"), webService("cache", "")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	x := env.Executor()
	for _, svc := range []string{"db", "cache"} {
		ex, out, errs := run(t, x, sandbox.Command{Args: []string{"wget", "-q", "-O", "-", "http://" + svc + ":8000/"}, WallTimeout: 30 * time.Second})
		if ex.Code != 0 || strings.TrimSpace(out) != svc+"-ok" {
			t.Fatalf("%s from the task container: %+v %q %q", svc, ex, out, errs)
		}
	}
	ins, err := c.API.NetworkInspect(ctx, env.network, network.InspectOptions{})
	if err != nil || !ins.Internal || ins.Labels[LabelRun] != c.RunID() {
		t.Fatalf("network: internal=%v labels=%v err=%v", ins.Internal, ins.Labels, err)
	}
	if cs, ns := countLabelled(t, c); cs != 3 || ns != 1 {
		t.Fatalf("while running: %d containers, %d networks; want 3 and 1", cs, ns)
	}
	if err := env.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if cs, ns := countLabelled(t, c); cs != 0 || ns != 0 {
		t.Fatalf("after Close: %d containers, %d networks left", cs, ns)
	}
}

// A sidecar that never turns healthy is an infrastructure error naming it,
// and nothing of the environment is left behind.
func TestUnhealthyServiceIsInfraError(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	bad := webService("broken", "healthy")
	bad.Healthcheck.Test = []string{"CMD-SHELL", "exit 1"}
	bad.Healthcheck.Retries = 2
	_, err := c.Start(ctx, Spec{Image: testImage, Services: &Services{List: []Service{bad}, StartTimeout: time.Minute}})
	var ie *InfraError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "service broken") || !strings.Contains(err.Error(), "unhealthy") {
		t.Fatalf("want an infrastructure error naming the service: %v", err)
	}
	if cs, ns := countLabelled(t, c); cs != 0 || ns != 0 {
		t.Fatalf("after a failed start: %d containers, %d networks left", cs, ns)
	}
}

// CleanupRun removes the networks of a run that was killed before it
// could close its environments.
func TestCleanupRemovesNetworks(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.Start(ctx, Spec{Image: testImage, Services: &Services{List: []Service{webService("db", "")}}}); err != nil {
		t.Fatal(err)
	}
	if err := CleanupRun(ctx, c.API, c.RunID(), false); err != nil {
		t.Fatal(err)
	}
	if cs, ns := countLabelled(t, c); cs != 0 || ns != 0 {
		t.Fatalf("after CleanupRun: %d containers, %d networks left", cs, ns)
	}
}

// The allowlist: plain HTTP and CONNECT reach an allowed host through the
// host-side proxy, a host not listed is refused, the container has no
// direct route out, and the model relay stays reachable.
func TestEgressAllowlist(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "target-ok "+r.Host)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dialed := make(chan string, 100)
	// Names resolve to the loopback listener, so no traffic leaves the host.
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed <- addr
		_, p, _ := net.SplitHostPort(addr)
		var d net.Dialer
		return d.DialContext(ctx, network, "127.0.0.1:"+p)
	}
	env, err := c.Start(ctx, Spec{Image: testImage,
		Relay:  &RelaySpec{Target: ln.Addr().String(), Binary: relayBin},
		Egress: &EgressSpec{Hosts: []string{"allowed.test", "*.wild.test"}, Binary: relayBin, Dial: dial},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	x := env.Executor()
	// busybox wget crashes resolving names (static glibc), so the test
	// speaks to the proxy with nc, as a proxy-aware client would, at the
	// address the proxy variables name.
	proxied := func(request string) string {
		_, out, _ := run(t, x, sandbox.Command{Args: []string{"sh", "-c", `hp=${http_proxy#http://}; printf '` + request + `' | nc -w 5 ${hp%:*} ${hp##*:} | tr -d '\r'`}, WallTimeout: 30 * time.Second})
		return out
	}
	for _, host := range []string{"allowed.test", "api.wild.test"} {
		out := proxied(`GET http://` + host + `:` + port + `/ HTTP/1.0\r\nHost: ` + host + `\r\n\r\n`)
		if !strings.Contains(out, " 200 OK") || !strings.HasSuffix(out, "target-ok "+host+":"+port) {
			t.Fatalf("allowed %s through the proxy: %q", host, out)
		}
	}
	if out := proxied(`GET http://denied.test:` + port + `/ HTTP/1.0\r\n\r\n`); !strings.Contains(out, " 403 Forbidden") || strings.Contains(out, "target-ok") {
		t.Fatalf("denied host: %q", out)
	}
	connect := func(host string) string {
		return proxied(`CONNECT ` + host + `:` + port + ` HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.0\r\nHost: ` + host + `\r\n\r\n`)
	}
	if out := connect("allowed.test"); !strings.Contains(out, "200 Connection Established") || !strings.Contains(out, "target-ok allowed.test") {
		t.Fatalf("CONNECT to an allowed host: %q", out)
	}
	if out := connect("denied.test"); !strings.Contains(out, "403") || strings.Contains(out, "target-ok") {
		t.Fatalf("CONNECT to a denied host: %q", out)
	}
	// No route out except through the proxy: the container has no routes.
	if _, out, _ := run(t, x, sandbox.Command{Args: []string{"cat", "/proc/net/route"}, WallTimeout: 30 * time.Second}); strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("the container has routes: %q", out)
	}
	// The model relay needs no proxy.
	if _, out, _ := run(t, x, sandbox.Command{Args: []string{"sh", "-c", `printf 'GET /v1 HTTP/1.0\r\n\r\n' | nc -w 5 127.0.0.1 18080`}, WallTimeout: 30 * time.Second}); !strings.Contains(out, "target-ok") {
		t.Fatalf("model relay: %q", out)
	}
	for len(dialed) > 0 {
		if addr := <-dialed; strings.HasPrefix(addr, "denied.test") {
			t.Fatalf("the proxy dialed a denied host: %s", addr)
		}
	}
	if d := env.EgressDenied(); len(d) != 2 || d[0] != "denied.test" {
		t.Fatalf("denied hosts recorded: %v", d)
	}
}

func TestEgressAllows(t *testing.T) {
	s := EgressSpec{Hosts: []string{"Example.com", "*.github.com", ".pypi.org"}}
	for host, want := range map[string]bool{
		"example.com": true, "EXAMPLE.COM.": true, "www.example.com": false,
		"api.github.com": true, "github.com": false, "files.pypi.org": true, "evil-example.com": false,
		"notgithub.com": false,
	} {
		if got := s.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
}
