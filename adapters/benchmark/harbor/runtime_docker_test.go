package harbor

// Real Docker: Harbor tasks run and are verified as Harbor runs them. Each
// test takes a real task.toml (Terminal-Bench 2.0, Harbor's examples) and
// substitutes a local busybox-based image for the one it names (nothing can
// be pulled here).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
)

// pmars is Terminal-Bench 2.0's build-pmars with a local busybox image
// (WORKDIR /app, as its own) for the one it names, and testSh as test.sh.
func pmars(t *testing.T, name, testSh string) (*Benchmark, benchmark.Task) {
	t.Helper()
	if setupErr != nil {
		t.Fatalf("docker not available (run scripts/start-dockerd.sh; needs busybox-static): %v", setupErr)
	}
	c := dockerenv.Client(t, "harbor-"+name)
	tag := fmt.Sprintf("hoh-test-%s:%d", name, time.Now().UnixNano())
	dockerenv.BusyboxImage(t, c, tag, "WORKDIR /app")
	root := t.TempDir()
	testenv.HarborTask(t, root, "terminal-bench-2/build-pmars", testSh,
		`docker_image = "alexgshaw/build-pmars:20251031"`, `docker_image = "`+tag+`"`)
	b := &Benchmark{Dataset: "tb2", Root: root, Docker: c}
	return b, onlyTask(t, b)
}

func onlyTask(t *testing.T, b *Benchmark) benchmark.Task {
	t.Helper()
	ts, err := b.Tasks(context.Background())
	if err != nil || len(ts) != 1 {
		t.Fatalf("tasks %v: %v (notes %v)", ts, err, b.LoadNotes())
	}
	return ts[0]
}

func run(t *testing.T, x sandbox.Executor, script string) string {
	t.Helper()
	var out bytes.Buffer
	ex, err := x.Run(context.Background(), sandbox.Command{Args: []string{"/bin/sh", "-c", script}, Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil || ex.Code != 0 {
		t.Fatalf("%q: exit %d %v: %s", script, ex.Code, err, out.String())
	}
	return strings.TrimSpace(out.String())
}

// Terminal-Bench 2.0's build-pmars: the agent installs /usr/local/bin/pmars,
// outside the workspace. The verifier of checkpoint 1 (the committed agent
// container) sees it; checkpoint 0's (the task image) does not. test.sh's
// stdout, stderr and /logs/verifier are kept with the checkpoint.
func TestVerifierRunsInTheCheckpointsCommittedEnvironment(t *testing.T) {
	testSh := `#!/bin/sh
echo "verifier stdout"
echo "verifier stderr" >&2
echo "kept" > /logs/verifier/extra.txt
if [ "$(pmars 2>/dev/null)" = "pmars built" ] && [ -f /app/notes.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
`
	b, tk := pmars(t, "checkpoint", testSh)
	c := b.Docker
	ctx := context.Background()
	a0 := t.TempDir()
	if err := b.InitialWorkspace(ctx, tk, a0); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	env, err := b.StartEnvironment(ctx, tk, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, env.Executor(), `mkdir -p /usr/local/bin && printf '#!/bin/sh\necho pmars built\n' > /usr/local/bin/pmars && chmod +x /usr/local/bin/pmars && echo done > notes.txt`)
	img, err := env.Commit(ctx, map[string]string{"hoh.checkpoint": "1"})
	if err != nil {
		t.Fatal(err)
	}
	env.Close(ctx)
	ins, err := c.API.ImageInspect(ctx, img)
	if err != nil || ins.Config.Labels[docker.LabelRun] != c.RunID() || ins.Config.Labels["hoh.checkpoint"] != "1" {
		t.Fatalf("checkpoint image labels %v (%v)", ins.Config.Labels, err)
	}

	out0 := filepath.Join(t.TempDir(), "cp-0-verifier")
	ev0, err := b.Evaluate(benchmark.WithOutputDir(ctx, out0), tk, a0)
	if err != nil || ev0.Metrics["reward"] != 0 {
		t.Fatalf("checkpoint 0 (task image): %+v %v", ev0, err)
	}
	out1 := filepath.Join(t.TempDir(), "cp-1-verifier")
	ev1, err := b.Evaluate(benchmark.WithEnvironmentImage(benchmark.WithOutputDir(ctx, out1), img), tk, ws)
	if err != nil || ev1.Metrics["reward"] != 1 || ev1.Error != "" {
		t.Fatalf("checkpoint 1 (committed environment): %+v %v", ev1, err)
	}
	for f, want := range map[string]string{"test-stdout.txt": "verifier stdout\n", "test-stderr.txt": "verifier stderr\n",
		"verifier/reward.txt": "1\n", "verifier/extra.txt": "kept\n"} {
		got, err := os.ReadFile(filepath.Join(out1, f))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", f, got, err, want)
		}
	}
	// A checkpoint's own workspace is verified, not whatever the image held
	// there: checkpoint 1's environment with A_0's files scores 0.
	ev, err := b.Evaluate(benchmark.WithEnvironmentImage(ctx, img), tk, a0)
	if err != nil || ev.Metrics["reward"] != 0 {
		t.Fatalf("committed environment with A_0's workspace: %+v %v", ev, err)
	}
}

// test.sh runs by its shebang, not as "bash file" / "sh file": an awk
// program as test.sh writes the reward.
func TestTestShRunsByItsShebang(t *testing.T) {
	testSh := "#!/bin/awk -f\nBEGIN { print \"{\\\"reward\\\": 1, \\\"style\\\": 0.5}\" > \"/logs/verifier/reward.json\" }\n"
	b, tk := pmars(t, "shebang", testSh)
	ev, err := b.Evaluate(context.Background(), tk, t.TempDir())
	if err != nil || ev.Metrics["reward"] != 1 || ev.Metrics["style"] != 0.5 {
		t.Fatalf("%+v %v", ev, err)
	}
}

// Harbor's hello-healthcheck, hello-workdir and hello-user settings on one
// image: the image's ENTRYPOINT starts a server (after a delay) that the
// healthcheck waits for; the image's PATH and ENV survive; [environment.env]
// and [verifier.env] templates resolve from the host (values kept out of
// the evaluation record and the committed image); workdir, agent.user and
// verifier.user are honoured.
func TestEnvironmentStartsAsTheTaskDeclares(t *testing.T) {
	if setupErr != nil {
		t.Fatalf("docker not available (run scripts/start-dockerd.sh; needs busybox-static): %v", setupErr)
	}
	c := dockerenv.Client(t, "harbor-environment")
	tag := fmt.Sprintf("hoh-test-env:%d", time.Now().UnixNano())
	dockerenv.BusyboxImage(t, c, tag,
		`RUN mkdir -p /opt/tool/bin /custom-workdir /home/agent && printf '#!/bin/sh\necho tool ok\n' > /opt/tool/bin/imgtool && chmod +x /opt/tool/bin/imgtool`,
		`RUN echo 'agent:x:1000:1000::/home/agent:/bin/sh' >> /etc/passwd && echo 'agent:x:1000:' >> /etc/group && echo 'root:x:0:' >> /etc/group && chown 1000:1000 /custom-workdir /home/agent`,
		`RUN printf '#!/bin/sh\n(sleep 2 && echo ok > /tmp/index.html && httpd -p 8080 -h /tmp) &\nexec "$@"\n' > /entrypoint.sh && chmod +x /entrypoint.sh`,
		`ENV PATH=/opt/tool/bin:/usr/local/bin:/usr/bin:/bin IMAGE_VAR=from-image`,
		`ENTRYPOINT ["/entrypoint.sh"]`)
	const secret = "s3cret-greeting-value"
	t.Setenv("HOH_TEST_GREETING", secret)
	testSh := `#!/bin/sh
echo "greeting: $V_GREETING"; echo "greeting: $GREETING" > /logs/verifier/greeting.txt
ok() { if eval "$1"; then echo 1; else echo 0; fi; }
printf '{"reward": %s, "server": %s, "user": %s, "env": %s, "workdir": %s}\n' \
  "$(ok '[ "$(cat result.txt)" = ok ]')" \
  "$(ok 'wget -q -O - http://localhost:8080/ >/dev/null')" \
  "$(ok '[ "$(id -un)" = agent ]')" \
  "$(ok '[ "$V_GREETING" = "$GREETING" ] && [ "$FALLBACK" = fallback ] && [ "$IMAGE_VAR" = from-image ] && [ "$(imgtool)" = "tool ok" ]')" \
  "$(ok '[ "$(pwd)" = /custom-workdir ]')" > /logs/verifier/reward.json
`
	root := t.TempDir()
	testenv.HarborTask(t, root, "harbor-examples/tasks/hello-healthcheck", testSh,
		"[environment]\n", "[environment]\ndocker_image = \""+tag+"\"\nworkdir = \"/custom-workdir\"\n",
		`command = "curl -sf http://localhost:8080/"`, `command = "wget -q -O - http://localhost:8080/"`,
		"[agent]\n", "[agent]\nuser = \"agent\"\n",
		"[verifier]\n", "[verifier]\nuser = \"agent\"\n",
		"[verifier.env]\n", "[verifier.env]\nV_GREETING = \"${HOH_TEST_GREETING}\"\n",
		"[solution.env]", "[solution.env]\n\n[environment.env]\nGREETING = \"${HOH_TEST_GREETING}\"\nFALLBACK = \"${HOH_TEST_UNSET_VARIABLE:-fallback}\"")
	b := &Benchmark{Dataset: "examples", Root: root, Docker: c}
	tk := onlyTask(t, b)
	ctx := context.Background()
	ws := t.TempDir()
	os.Chmod(ws, 0o777) // the agent user writes the bind-mounted workspace
	env, err := b.StartEnvironment(ctx, tk, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(ctx)
	x := env.Executor()
	// Start returned only once healthy: the server the entrypoint starts
	// after 2 s answers at once.
	if got := run(t, x, `wget -q -O - http://localhost:8080/`); got != "ok" {
		t.Fatalf("server: %q", got)
	}
	got := run(t, x, `echo "$(id -un) $(pwd) $IMAGE_VAR $GREETING $FALLBACK $(imgtool)"; echo "$PATH"`)
	want := "agent /custom-workdir from-image " + secret + " fallback tool ok\n/opt/tool/bin:/usr/local/bin:/usr/bin:/bin"
	if got != want {
		t.Fatalf("agent sees\n%s\nwant\n%s", got, want)
	}
	// The task's instruction, as the agent would do it.
	run(t, x, `wget -q -O - http://localhost:8080/ > result.txt`)
	img, err := env.Commit(ctx, map[string]string{"hoh.checkpoint": "1"})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := c.API.ImageInspect(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := json.Marshal(ins.Config); strings.Contains(string(cfg), secret) || len(ins.Config.Entrypoint) != 1 || ins.Config.Entrypoint[0] != "/entrypoint.sh" {
		t.Fatalf("committed image config keeps the secret or loses the entrypoint: %s", cfg)
	}
	env.Close(ctx)
	out := filepath.Join(t.TempDir(), "cp-1-verifier")
	ev, err := b.Evaluate(benchmark.WithEnvironmentImage(benchmark.WithOutputDir(ctx, out), img), tk, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"reward", "server", "user", "env", "workdir"} {
		if ev.Metrics[k] != 1 {
			t.Errorf("verifier check %s failed: %+v", k, ev)
		}
	}
	if rec, _ := json.Marshal(ev); strings.Contains(string(rec), secret) {
		t.Errorf("the evaluation record holds the secret: %s", rec)
	}
	// What test.sh printed or wrote of it is kept redacted.
	testenv.AssertNoSecret(t, secret, out)
	if b, err := os.ReadFile(filepath.Join(out, "test-stdout.txt")); err != nil || !strings.Contains(string(b), "greeting: [REDACTED]") {
		t.Errorf("test-stdout.txt: %q %v", b, err)
	}
}

// A task whose healthcheck never passes fails to start, naming the check.
func TestUnhealthyEnvironmentIsAnInfrastructureFailure(t *testing.T) {
	if setupErr != nil {
		t.Fatalf("docker not available (run scripts/start-dockerd.sh; needs busybox-static): %v", setupErr)
	}
	c := dockerenv.Client(t, "harbor-unhealthy")
	tag := fmt.Sprintf("hoh-test-unhealthy:%d", time.Now().UnixNano())
	dockerenv.BusyboxImage(t, c, tag)
	root := t.TempDir()
	testenv.HarborTask(t, root, "harbor-examples/tasks/hello-healthcheck", "#!/bin/sh\n",
		"[environment]\n", "[environment]\ndocker_image = \""+tag+"\"\n",
		`command = "curl -sf http://localhost:8080/"`, `command = "echo never-healthy; exit 1"`)
	b := &Benchmark{Dataset: "examples", Root: root, Docker: c}
	tk := onlyTask(t, b)
	_, err := b.StartEnvironment(context.Background(), tk, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "healthcheck") || !strings.Contains(err.Error(), "never-healthy") {
		t.Fatalf("err = %v", err)
	}
}

// environment.build_timeout_sec bounds the build of environment/ (build-pmars's
// real task.toml with 600 s lowered to 2 s, its prebuilt image dropped): a
// slow build fails naming the limit.
func TestBuildTimeoutIsTheTasks(t *testing.T) {
	if setupErr != nil {
		t.Fatalf("docker not available (run scripts/start-dockerd.sh; needs busybox-static): %v", setupErr)
	}
	c := dockerenv.Client(t, "harbor-build-timeout")
	root := t.TempDir()
	task := testenv.HarborTask(t, root, "terminal-bench-2/build-pmars", "#!/bin/sh\n",
		`docker_image = "alexgshaw/build-pmars:20251031"`+"\n", "",
		"build_timeout_sec = 600.0", "build_timeout_sec = 2.0")
	os.MkdirAll(filepath.Join(task, "environment"), 0o755)
	os.WriteFile(filepath.Join(task, "environment", "Dockerfile"), []byte("FROM hoh-harbor-test-base:latest\nRUN sleep 60\n"), 0o644)
	b := &Benchmark{Dataset: "tb2", Root: root, Docker: c}
	start := time.Now()
	_, err := b.Image(context.Background(), onlyTask(t, b))
	if err == nil || !strings.Contains(err.Error(), "build_timeout_sec: 2s") || time.Since(start) > 45*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
}

// An image's own HEALTHCHECK is waited for when the task declares none: its
// entrypoint marks the container ready only after 2 s.
func TestImageHealthcheckIsWaitedFor(t *testing.T) {
	b, tk := pmars(t, "image-health", "#!/bin/sh\n")
	tag := fmt.Sprintf("hoh-test-image-health:%d", time.Now().UnixNano())
	dockerenv.BusyboxImage(t, b.Docker, tag,
		`RUN printf '#!/bin/sh\n(sleep 2 && touch /tmp/ready) &\nexec "$@"\n' > /entrypoint.sh && chmod +x /entrypoint.sh`,
		`HEALTHCHECK --interval=1s --timeout=5s --retries=30 CMD test -f /tmp/ready`,
		`ENTRYPOINT ["/entrypoint.sh"]`)
	tk.Limits.Image = tag
	env, err := b.StartEnvironment(context.Background(), tk, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.Background())
	run(t, env.Executor(), "test -f /tmp/ready")
}
