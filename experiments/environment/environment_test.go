package environment

// Integration tests: real Docker, the real Codex CLI mounted from the host,
// and the scripted model provider (the test double for the model) on the
// host, reached only through the relay.

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/harness/codex"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
	"github.com/hoh-research/hoh/runrecord"
)

const (
	keyEnv = "HOH_TEST_ENV_KEY"
	key    = "sk-hoh-env-test-secret-7171"
)

var relayBin, setupErr = "", error(nil)

func TestMain(m *testing.M) {
	tmp, _ := os.MkdirTemp("", "hoh-env-test-")
	relayBin = filepath.Join(tmp, "hoh-relay")
	if p := os.Getenv(docker.RelayEnv); p != "" {
		// A prebuilt relay: the rootless Podman test runs this binary as a
		// user who has no Go toolchain (experiments/runner/podman_test.go).
		relayBin = p
	} else {
		root, err := cliinstall.RepoRoot()
		if err == nil {
			err = docker.BuildRelayBinary(context.Background(), root, relayBin)
		}
		setupErr = err
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// rig is a Docker client with its own run label, checked empty at the end.
func dockerClient(t *testing.T) *docker.Client {
	t.Helper()
	if setupErr != nil {
		t.Fatalf("building hoh-relay: %v", setupErr)
	}
	return dockerenv.Client(t, "env")
}

// harborTask writes a Harbor task built from local files only: a busybox
// base image (built here, no pulls) and a task Dockerfile on top of it.
func harborTask(t *testing.T, c *docker.Client) (*harbor.Benchmark, benchmark.Task) {
	t.Helper()
	// node scripts start with #!/usr/bin/env node.
	baseImg := dockerenv.BusyboxImage(t, c, "", "RUN mkdir -p /usr/bin && ln -s /bin/env /usr/bin/env")
	root := t.TempDir()
	dir := filepath.Join(root, "answer")
	files := map[string]string{
		"task.toml": `schema_version = "1.2"
[task]
name = "synthetic/answer"
[agent]
timeout_sec = 300.0
[verifier]
timeout_sec = 60.0
[environment]
cpus = 1
memory_mb = 1024
allow_internet = false
`,
		"instruction.md":         "Write the number 42 into answer.txt.\n",
		"environment/Dockerfile": "FROM " + baseImg + "\nWORKDIR /app\nRUN echo seed > /app/seed.txt\n",
		"tests/test.sh": `#!/bin/sh
mkdir -p /logs/verifier
if [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
`,
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := &harbor.Benchmark{Dataset: "synthetic", Root: root, Docker: c}
	ts, err := b.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b, ts[0]
}

func scriptedProvider(t *testing.T, script scripted.Script) (*scripted.Server, harness.Provider) {
	t.Helper()
	srv, err := scripted.Start(script, scripted.Options{LogPath: filepath.Join(t.TempDir(), "provider.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, harness.Provider{Name: "scripted", API: "responses", BaseURL: srv.URL() + "/v1", KeyEnv: keyEnv, Model: "scripted-model"}
}

func codexFor(t *testing.T, p harness.Provider) *codex.Harness {
	t.Helper()
	clienv.CLI(t, "codex")
	h, err := codex.New(codex.Config{Provider: p, BypassSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLocalForHostTasks(t *testing.T) {
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	p := harness.Provider{Name: "x", BaseURL: "http://127.0.0.1:9/v1"}
	env, err := Open(context.Background(), b, ts[0], filepath.Join(t.TempDir(), "trial"), Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	if env.Kind != Local || env.Provider != p || !filepath.IsAbs(env.TrialDir) {
		t.Fatalf("%+v", env)
	}
	if _, ok := env.Exec.(sandbox.Local); !ok {
		t.Fatalf("executor %T", env.Exec)
	}
	if err := env.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRelayTarget(t *testing.T) {
	for in, want := range map[string]string{"http://127.0.0.1:8080/v1": "127.0.0.1:8080", "http://localhost/v1": "localhost:80"} {
		if got, err := relayTarget(in); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	if _, err := relayTarget("https://api.example.com/v1"); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("https accepted: %v", err)
	}
}

// The real Codex CLI works as the Developer inside a no-network task
// container, talking to the scripted provider on the host through the
// relay; the Harbor verifier then scores its file in a fresh container; and
// the same container cannot reach another listener on the host.
func TestCodexDeveloperInNoNetworkTaskContainer(t *testing.T) {
	c := dockerClient(t)
	ctx := context.Background()
	b, task := harborTask(t, c)
	srv, prov := scriptedProvider(t, scripted.Script{Entries: []scripted.Entry{{
		Name: "developer", Match: "answer.txt",
		Steps: []scripted.Step{
			{Write: &scripted.FileWrite{Path: "answer.txt", Content: "42"}},
			{Shell: "ls /app > listing.txt"},
			{Say: "Wrote answer.txt."},
		},
	}}})
	trialDir := filepath.Join(t.TempDir(), "trial")
	env, err := Open(ctx, b, task, trialDir, Options{Provider: prov, Docker: c, RelayBinary: relayBin, PidsLimit: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	if env.Kind != Docker || env.Provider.BaseURL != "http://127.0.0.1:18080/v1" {
		t.Fatalf("kind %s, in-container provider %q", env.Kind, env.Provider.BaseURL)
	}
	ins, err := c.API.ContainerInspect(ctx, env.Container.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ins.HostConfig.NetworkMode != "none" || ins.HostConfig.Memory != 1024<<20 || ins.HostConfig.NanoCPUs != 1e9 ||
		ins.HostConfig.PidsLimit == nil || *ins.HostConfig.PidsLimit != 512 {
		t.Fatalf("limits: net %s mem %d cpus %d pids %v", ins.HostConfig.NetworkMode, ins.HostConfig.Memory, ins.HostConfig.NanoCPUs, ins.HostConfig.PidsLimit)
	}
	// Of the trial directory, the container mounts the exchange only, at
	// its own paths: inputs and the working-directory link read-only,
	// scratch writable.
	want := map[string]bool{env.Exchange.Inputs: false, env.Exchange.Scratch: true, filepath.Dir(env.Exchange.Current): false}
	// The CLIs' tools directory is mounted read-only wherever it lives
	// ($HOH_TOOLS or the checkout's .tools/harnesses).
	toolsDirs := map[string]bool{}
	for _, d := range cliinstall.ToolsDirs() {
		toolsDirs[d] = true
	}
	roHarness := false
	for _, m := range ins.Mounts {
		roHarness = roHarness || (toolsDirs[m.Destination] && !m.RW)
		if rw, ok := want[m.Source]; ok && m.Destination == m.Source && m.RW == rw {
			delete(want, m.Source)
			continue
		}
		if within(m.Source, env.TrialDir) || within(env.TrialDir, m.Source) {
			t.Errorf("the container mounts %s (of the trial directory %s) at %s", m.Source, env.TrialDir, m.Destination)
		}
	}
	if len(want) > 0 || !roHarness {
		t.Fatalf("mounts: missing %v, harnesses read-only %v: %+v", want, roHarness, ins.Mounts)
	}
	if ex, err := env.Exec.Run(ctx, sandbox.Command{Args: []string{"touch", filepath.Join(env.Exchange.Inputs, "x")}, WallTimeout: 30 * time.Second}); err != nil || ex.Code == 0 {
		t.Errorf("the inputs are writable in the container (%+v, %v)", ex, err)
	}

	// The workspace as a trial places it for the Developer: in the
	// scratch, with the image's WORKDIR linked to it.
	ws := workspaceInView(t, env)
	if err := b.InitialWorkspace(ctx, task, ws); err != nil {
		t.Fatal(err)
	}
	adir := filepath.Join(env.TrialDir, "iter-01", "developer", "attempt-1")
	res, err := codexFor(t, env.Provider).Run(ctx, harness.Invocation{
		Role: runrecord.RoleDeveloper, Access: harness.AccessWrite, Prompt: "Write the number 42 into answer.txt.",
		WorkDir: ws, StateDir: filepath.Join(env.Exchange.Scratch, "state"), LogDir: filepath.Join(adir, "logs"),
		WallTimeout: 3 * time.Minute, IdleTimeout: 2 * time.Minute,
		Env: []string{keyEnv + "=" + key}, Secrets: []string{key}, Exec: env.Exec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != runrecord.OutcomeCompleted || res.FinalMessage != "Wrote answer.txt." {
		so, _ := os.ReadFile(filepath.Join(adir, "logs", "stdout.jsonl"))
		se, _ := os.ReadFile(filepath.Join(adir, "logs", "stderr.log"))
		t.Fatalf("codex in container: %+v\nstdout:\n%s\nstderr:\n%s", res, so, se)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "answer.txt")); string(got) != "42" {
		t.Fatalf("answer.txt on the host = %q", got)
	}
	// The image's WORKDIR /app is the trial workspace inside the container.
	if got, _ := os.ReadFile(filepath.Join(ws, "listing.txt")); !strings.Contains(string(got), "seed.txt") || !strings.Contains(string(got), "answer.txt") {
		t.Errorf("/app inside the container: %q", got)
	}
	if len(srv.Served()) < 3 {
		t.Errorf("provider served %d requests, want at least 3 (write, shell, answer)", len(srv.Served()))
	}

	// Evaluator-only files (the task folder's tests/) are not in the container.
	for _, p := range []string{"/tests", filepath.Join(task.Dir, "tests", "test.sh"), task.Dir} {
		ex, err := env.Exec.Run(ctx, sandbox.Command{Args: []string{"test", "-e", p}, WallTimeout: 30 * time.Second})
		if err != nil || ex.Code == 0 {
			t.Errorf("%s is visible in the agent container (%+v, %v)", p, ex, err)
		}
	}

	// Nothing but the model endpoint: another host listener stays unreachable.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if conn, err := other.Accept(); err == nil {
			accepted <- struct{}{}
			conn.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(other.Addr().String())
	for _, addr := range []string{"127.0.0.1:" + port, "172.17.0.1:" + port, "10.0.2.2:" + port} {
		ex, err := env.Exec.Run(ctx, sandbox.Command{Args: []string{"wget", "-q", "-T", "3", "-O", "-", "http://" + addr + "/"}, WallTimeout: 30 * time.Second})
		if err != nil || ex.Code == 0 {
			t.Fatalf("container reached %s (exit %+v, %v)", addr, ex, err)
		}
	}
	ex, err := env.Exec.Run(ctx, sandbox.Command{Args: []string{"wget", "-q", "-T", "5", "-O", "/dev/null", env.Provider.BaseURL + "/models"}, WallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = ex // any HTTP answer or error status is fine; reaching the relay is what the codex run proved
	select {
	case <-accepted:
		t.Fatal("the host listener accepted a connection from the container")
	default:
	}
	if err := env.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.API.ContainerInspect(ctx, ins.ID); err == nil {
		t.Fatal("Close left the container")
	}

	// The verifier scores the frozen workspace in a fresh container.
	ev, err := b.Evaluate(ctx, task, ws)
	if err != nil || ev.Metrics["reward"] != 1 {
		t.Fatalf("verifier on Codex's workspace: %+v %v", ev, err)
	}
	a0 := t.TempDir()
	b.InitialWorkspace(ctx, task, a0)
	if ev, err := b.Evaluate(ctx, task, a0); err != nil || ev.Metrics["reward"] != 0 {
		t.Fatalf("verifier on A_0: %+v %v", ev, err)
	}
	testenv.AssertNoSecret(t, key, env.TrialDir)
}

// A whole HoH@1 trial of a Harbor task runs in Docker through this package:
// Planner, Developer and QA Tester are the real Codex CLI in the task
// container against scripted replies; the checkpoint is scored by the Harbor
// verifier and lands in scores.csv.
func TestHoHTrialOfHarborTaskInDocker(t *testing.T) {
	c := dockerClient(t)
	ctx := context.Background()
	b, task := harborTask(t, c)
	plan := `{"objective":"write the answer","tasks":[{"id":"T1","description":"write 42 into answer.txt"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"answer.txt holds 42","observation":"cat answer.txt"}]}`
	qa := `{"iteration":1,"qa_status":"pass","verified_records":[{"claim_id":"c1","claim":"answer.txt holds 42","status":"verified","execution_records":[{"type":"command","command":"cat answer.txt","observation":"42"}]}],"gap_records":[]}`
	srv, prov := scriptedProvider(t, scripted.Script{Entries: []scripted.Entry{
		{Name: "planner", Match: "Role: Project Planner", Steps: []scripted.Step{{Say: plan}}},
		{Name: "developer", Match: "Role: Developer", Steps: []scripted.Step{
			{Write: &scripted.FileWrite{Path: "answer.txt", Content: "42"}},
			{Say: `{"summary":"wrote answer.txt","self_tests":[{"command":"cat answer.txt","outcome":"42"}]}`},
		}},
		{Name: "qa", Match: "Role: QA Tester", Steps: []scripted.Step{{Shell: "cat answer.txt"}, {Say: qa}}},
	}})
	trialDir := filepath.Join(t.TempDir(), "trial")
	env, err := Open(ctx, b, task, trialDir, Options{Provider: prov, Docker: c, RelayBinary: relayBin})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	spec := runrecord.TrialSpec{Key: "synthetic/answer/hoh@1", Benchmark: "synthetic", Task: task.ID, Config: "codex-scripted", Arm: runrecord.Arm{Condition: "hoh", Checkpoint: 1}, Rep: 1}
	to := 3 * time.Minute
	s, err := trial.Run(ctx, env.TrialDir, spec, trial.NewEnv(
		trial.Policy{Timeouts: trial.Timeouts{Planner: to, Developer: to, QA: to, Idle: 2 * time.Minute}, Logf: t.Logf},
		trial.Place{Bench: b, Task: task, Exec: env.Exec, Exchange: env.Exchange},
		trial.Route{Env: []string{keyEnv + "=" + key}, Secrets: []string{key}},
		codexFor(t, env.Provider),
		trial.Mode{},
	))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != runrecord.StatusCompleted || len(s.Checkpoints) != 1 || s.Checkpoints[0].Metrics["reward"] != 1 {
		for _, role := range []string{"planner", "developer", "qa"} {
			e, _ := os.ReadFile(filepath.Join(env.TrialDir, "iter-01", role, "attempt-1", "logs", "stderr.log"))
			t.Logf("%s stderr:\n%s", role, e)
		}
		t.Fatalf("summary: %+v", s)
	}
	if s.Usage.Total == 0 || s.Usage.Total != srv.TotalUsage().Total {
		t.Errorf("ledger %d tokens, provider served %d", s.Usage.Total, srv.TotalUsage().Total)
	}
	rows, err := runrecord.ReadScores(filepath.Join(env.TrialDir, "scores.csv"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("scores.csv: %v %+v", err, rows)
	}
	if r := rows[0]; r.Metric != "reward" || r.Value != 1 || r.Checkpoint != 1 || r.Task != task.ID || r.Tokens <= 0 {
		t.Fatalf("score row %+v", r)
	}
	for _, role := range []string{"planner", "developer", "qa"} {
		if _, err := os.Stat(filepath.Join(env.TrialDir, "iter-01", role, "attempt-1", "logs", "result.json")); err != nil {
			t.Errorf("%s: %v", role, err)
		}
	}
	testenv.AssertNoSecret(t, key, env.TrialDir)
}

// A ProgramBench task gets a no-network container from the configured agent
// image, with the clean-room A_0 reachable at the trial path and at
// /workspace.
func TestProgramBenchTaskContainer(t *testing.T) {
	c := dockerClient(t)
	ctx := context.Background()
	b, err := programbench.Load("../../adapters/benchmark/programbench/testdata/calc")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := b.Tasks(ctx)
	trialDir := filepath.Join(t.TempDir(), "trial")
	if _, err := Open(ctx, b, ts[0], trialDir, Options{Docker: c}); err == nil || !strings.Contains(err.Error(), "AgentImage") {
		t.Fatalf("no agent image must be a clear error, got %v", err)
	}
	bb, _ := docker.FindBusybox()
	ctxDir := t.TempDir()
	if err := docker.BusyboxContext(ctxDir, bb); err != nil {
		t.Fatal(err)
	}
	img, err := c.BuildImage(ctx, ctxDir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	b.Opts.AgentImage = img
	env, err := Open(ctx, b, ts[0], trialDir, Options{Docker: c})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	ws := workspaceInView(t, env)
	if err := b.InitialWorkspace(ctx, ts[0], ws); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{ws, programbench.WorkspacePath} {
		var out strings.Builder
		ex, err := env.Exec.Run(ctx, sandbox.Command{Args: []string{"./executable", "mul", "6", "7"}, Dir: dir, Stdout: &out, WallTimeout: 30 * time.Second})
		if err != nil || ex.Code != 0 || out.String() != "42\n" {
			t.Fatalf("in %s: %+v %v %q", dir, ex, err, out.String())
		}
	}
	ins, _ := c.API.ContainerInspect(ctx, env.Container.ID)
	if ins.HostConfig.NetworkMode != "none" {
		t.Fatalf("network %s", ins.HostConfig.NetworkMode)
	}
}

// workspaceInView places a workspace where a trial puts the Developer's
// (the exchange's scratch, the image's WORKDIR linked to it) and returns it.
func workspaceInView(t *testing.T, env *Env) string {
	t.Helper()
	ws := filepath.Join(env.Exchange.Scratch, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.PointLink(env.Exchange.Current, ws); err != nil {
		t.Fatal(err)
	}
	return ws
}
