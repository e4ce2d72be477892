package harbor

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"

	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/testenv"
)

// realTask copies a real Harbor task's task.toml and instruction.md from
// ../shared into a new task folder named id under root, so a test can give
// it local environment/ and tests/ files (nothing can be pulled here).
func realTask(t *testing.T, root, id string, from ...string) string {
	t.Helper()
	src := testenv.SharedPath(t, append([]string{"benchmarks", "harbor-tasks", "harbor-examples"}, from...)...)
	dir := filepath.Join(root, id)
	for _, f := range []string{"task.toml", "instruction.md"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatalf("shared benchmark data (../shared/benchmarks) required: %v", err)
		}
		writeFile(t, filepath.Join(dir, f), string(data))
	}
	return dir
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if strings.HasSuffix(path, ".sh") {
		mode = 0o755
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// Harbor's own hello-mcp example: main waits for a healthy mcp-server
// built from its own folder; the Compose loader reads it with nothing
// hoh would drop.
func TestLoadComposeRealExample(t *testing.T) {
	dir := testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples", "tasks", "hello-mcp")
	p, unsupported, err := loadCompose(context.Background(), dir)
	if err != nil || len(unsupported) != 0 {
		t.Fatalf("%v %v", unsupported, err)
	}
	mcp, ok := p.Services["mcp-server"]
	if !ok || mcp.Build == nil || mcp.Build.Context != filepath.Join(dir, "environment", "mcp-server") || mcp.HealthCheck == nil {
		t.Fatalf("mcp-server: %+v", mcp)
	}
	if d := p.Services[mainService].DependsOn["mcp-server"]; d.Condition != "service_healthy" {
		t.Fatalf("main depends_on: %+v", p.Services[mainService].DependsOn)
	}
	if svcs, err := serviceOrder(p); err != nil || strings.Join(svcs, ",") != "mcp-server" {
		t.Fatalf("order %v %v", svcs, err)
	}
}

// Attributes hoh would drop refuse the task at plan time, each by its path;
// so does a file the Compose loader rejects (a depends_on cycle).
func TestComposeRefusalsNameEachAttribute(t *testing.T) {
	root := t.TempDir()
	dir := realTask(t, root, "mcp", "tasks", "hello-mcp")
	compose := filepath.Join(dir, "environment", "docker-compose.yaml")
	writeFile(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM scratch\n")
	refusals := func(body string) string {
		writeFile(t, compose, body)
		l, err := LoadTask("d", dir, "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range l.Unsupported() {
			if r.Path != compose {
				t.Errorf("refusal names %s", r.Path)
			}
			got = append(got, r.Feature+": "+r.Reason)
		}
		return strings.Join(got, "\n")
	}
	all := refusals(`services:
  main:
    command: ["sleep", "1"]
    depends_on: [db]
  db:
    image: postgres:16
    volumes: ["/data"]
    ports: ["5432:5432"]
`)
	for _, want := range []string{"Compose attribute services.db.volumes", "Compose attribute services.db.ports", "services.main.command (Harbor sets the main service itself)"} {
		if !strings.Contains(all, want) {
			t.Errorf("refusals lack %q:\n%s", want, all)
		}
	}
	if all := refusals("services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n    depends_on: [a]\n"); !strings.Contains(all, "Compose loader rejects it") || !strings.Contains(all, "cycle") {
		t.Errorf("cycle: %s", all)
	}
}

// A Compose environment as Harbor runs it: the real hello-mcp task.toml with
// a busybox sidecar of the same name built from its own folder; main starts
// only once the sidecar is healthy; the agent and the verifier both reach it
// by name; the network and the sidecar are gone afterwards (the test client
// fails the test if anything labelled remains).
func TestComposeSidecarReachableFromAgentAndVerifier(t *testing.T) {
	b := newBench(t, nil)
	root := t.TempDir()
	dir := realTask(t, root, "hello-mcp", "tasks", "hello-mcp")
	writeFile(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM hoh-harbor-test-base:latest\nWORKDIR /app\n")
	writeFile(t, filepath.Join(dir, "environment", "mcp-server", "Dockerfile"), "FROM hoh-harbor-test-base:latest\n"+
		`CMD ["/bin/sh", "-c", "mkdir -p /www && echo sidecar-says-$GREETING > /www/index.html && exec httpd -f -p 8000 -h /www"]`+"\n")
	writeFile(t, filepath.Join(dir, "environment", "docker-compose.yaml"), `services:
  main:
    environment:
      SIDECAR_URL: http://mcp-server:8000/
    depends_on:
      mcp-server:
        condition: service_healthy
  mcp-server:
    build:
      context: ./mcp-server
    environment:
      GREETING: hello
    expose: ["8000"]
    healthcheck:
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8000/"]
      interval: 1s
      timeout: 5s
      retries: 30
`)
	writeFile(t, filepath.Join(dir, "tests", "test.sh"), `#!/bin/sh
mkdir -p /logs/verifier
live=$(wget -q -O - http://mcp-server:8000/)
agent=0; [ "$(cat /app/fetched.txt 2>/dev/null)" = "sidecar-says-hello" ] && agent=1
verifier=0; [ "$live" = "sidecar-says-hello" ] && verifier=1
echo "{\"reward\": $((agent * verifier)), \"agent_reached\": $agent, \"verifier_reached\": $verifier}" > /logs/verifier/reward.json
`)
	b.Root = root
	tk := task(t, b, "hello-mcp")
	ctx := context.Background()
	tr, err := b.RunTrial(ctx, tk, Command{Script: `wget -q -O - "$SIDECAR_URL" > fetched.txt`}, t.TempDir())
	if err != nil || tr.Failure != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	if m := tr.Evaluation.Metrics; m["reward"] != 1 || m["agent_reached"] != 1 || m["verifier_reached"] != 1 {
		t.Fatalf("metrics %v (%v)", m, tr.Evaluation.Details["verifier_output"])
	}
	// An agent that did nothing: the verifier still reaches the sidecar.
	tr, err = b.RunTrial(ctx, tk, Nop{}, t.TempDir())
	if err != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	if m := tr.Evaluation.Metrics; m["reward"] != 0 || m["agent_reached"] != 0 || m["verifier_reached"] != 1 {
		t.Fatalf("nop metrics %v", m)
	}
	if cs, ns := countRun(t, b); cs != 0 || ns != 0 {
		t.Fatalf("after the trials: %d containers and %d networks of the run left", cs, ns)
	}
}

// network_mode = "allowlist" as Harbor's own e-allowlist example declares it
// (allowed_hosts = ["example.com"]): the agent and the verifier reach the
// listed host through hoh's egress proxy and nothing else. The proxy's
// dialer sends every admitted name to a loopback test server, so no traffic
// leaves the host.
func TestAllowlistAgentAndVerifier(t *testing.T) {
	b := newBench(t, nil)
	fetch := allowlistRig(t, b)
	root := t.TempDir()
	dir := realTask(t, root, "e-allowlist", "network-policy-matrix-static", "e-allowlist")
	writeFile(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM hoh-harbor-test-base:latest\nWORKDIR /app\n")
	writeFile(t, filepath.Join(dir, "tests", "test.sh"), "#!/bin/sh\n"+fetch+`
mkdir -p /logs/verifier
r=1
grep -q "page of example.com" /app/example.txt || r=0
grep -q " 403 " /app/github.txt || r=0
fetch example.com | grep -q "page of example.com" || r=0
fetch github.com | grep -q " 403 " || r=0
[ -n "$(sed 1d /proc/net/route)" ] && r=0
echo $r > /logs/verifier/reward.txt
`)
	b.Root = root
	tk := task(t, b, "e-allowlist")
	if tk.Limits.AllowInternet {
		t.Fatal("an allowlist task must not get an open network")
	}
	tr, err := b.RunTrial(context.Background(), tk, Command{Script: fetch + "; fetch example.com > example.txt; fetch github.com > github.txt"}, t.TempDir())
	if err != nil || tr.Failure != nil || tr.Evaluation == nil {
		t.Fatalf("%v %+v", err, tr)
	}
	if got := tr.Evaluation.Metrics["reward"]; got != 1 {
		t.Fatalf("reward %v: %v", got, tr.Evaluation.Details["verifier_output"])
	}
}

var relayOnce struct {
	sync.Once
	path string
	err  error
}

// relayBinary builds cmd/hoh-relay once for the package's tests, or is
// $HOH_RELAY (a user without a Go toolchain runs the compiled tests).
func relayBinary(t *testing.T) string {
	t.Helper()
	relayOnce.Do(func() {
		if p := os.Getenv(docker.RelayEnv); p != "" {
			relayOnce.path = p
			return
		}
		root, err := cliinstall.RepoRoot()
		if err != nil {
			relayOnce.err = err
			return
		}
		dir, err := os.MkdirTemp("", "hoh-harbor-relay-")
		if err != nil {
			relayOnce.err = err
			return
		}
		relayOnce.path = filepath.Join(dir, "hoh-relay")
		relayOnce.err = docker.BuildRelayBinary(context.Background(), root, relayOnce.path)
	})
	if relayOnce.err != nil {
		t.Fatal(relayOnce.err)
	}
	return relayOnce.path
}

// countRun counts the containers and networks carrying b's run label.
func countRun(t *testing.T, b *Benchmark) (containers, networks int) {
	t.Helper()
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", docker.LabelRun+"="+b.Docker.RunID()))
	cs, err := b.Docker.API.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := b.Docker.API.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs), len(ns)
}

// A sidecar's prebuilt image that is not present locally refuses the task
// at plan time, named with how to provide it.
func TestComposeMissingServiceImageRefusedAtPlan(t *testing.T) {
	b := newBench(t, nil)
	root := t.TempDir()
	dir := realTask(t, root, "hello-mcp", "tasks", "hello-mcp")
	writeFile(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM hoh-harbor-test-base:latest\n")
	writeFile(t, filepath.Join(dir, "environment", "docker-compose.yaml"), "services:\n  db:\n    image: hoh-no-such-image:never\n")
	writeFile(t, filepath.Join(dir, "tests", "test.sh"), "#!/bin/sh\n")
	b.Root = root
	if _, err := b.Tasks(context.Background()); err == nil {
		t.Fatal("a task whose sidecar image is missing was planned")
	}
	notes := strings.Join(b.LoadNotes(), "\n")
	if !strings.Contains(notes, "refused task hello-mcp") || !strings.Contains(notes, `services.db.image "hoh-no-such-image:never" is not present locally`) {
		t.Fatalf("notes: %s", notes)
	}
}

// allowlistRig serves every name the egress proxy of b admits from one
// loopback test server ("page of HOST"), so no traffic leaves the host, and
// returns a shell function fetch HOST for the task's scripts: a proxy
// request with nc (busybox wget cannot resolve names in a static build)
// printing the status line and the body.
func allowlistRig(t *testing.T, b *Benchmark) (fetch string) {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "page of "+r.Host)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	b.EgressDial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, ln.Addr().String())
	}
	b.RelayBinary = relayBinary(t)
	return `fetch() { hp=${http_proxy#http://}; printf 'GET http://%s:` + port + `/ HTTP/1.0\r\n\r\n' "$1" | nc -w 5 ${hp%:*} ${hp##*:} | tr -d '\r' | sed -n '1p;$p'; }`
}
