package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

// gamecraftReal is the shared GameCraft-Bench checkout (../shared).
func gamecraftReal(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "..", "shared", "benchmarks", "gamecraft-bench")
	if _, err := os.Stat(filepath.Join(p, "tasks", "platformer-arcborne", "tests", "test.sh")); err != nil {
		t.Fatalf("real task data missing (../shared/benchmarks/gamecraft-bench): %v", err)
	}
	return p
}

// gamecraftCheckout copies the real task platformer-arcborne (its
// task.toml, instruction, rubric and upstream test.sh, unchanged) and the
// checkout's public tools into a checkout under a temporary folder, with
// environment/ replaced by dockerfile and the files of extra (paths
// relative to environment/); it returns the checkout's root.
func gamecraftCheckout(t *testing.T, dockerfile string, extra map[string]string) string {
	t.Helper()
	real := gamecraftReal(t)
	root := t.TempDir()
	task := filepath.Join(root, "tasks", "platformer-arcborne")
	files := map[string]string{"environment/Dockerfile": dockerfile}
	for k, v := range extra {
		files["environment/"+k] = v
	}
	for _, rel := range []string{"task.toml", "instruction.md", "tests/rubric.json", "tests/test.sh"} {
		b, err := os.ReadFile(filepath.Join(real, "tasks", "platformer-arcborne", rel))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = string(b)
	}
	for rel, body := range files {
		p := filepath.Join(task, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "tools"), 0o755)
	os.WriteFile(filepath.Join(root, "tools", "screenshot.sh"), []byte("#!/bin/sh\n"), 0o755)
	return root
}

// Test-only stand-ins baked into the task image so the plumbing can run
// without Godot (never results): a "godot" that reports 4.6.2, the replay
// tools as no-ops, bash as busybox's sh, and a "python3" playing `-m gamecraft_bench.verifier`.
// It writes breakdown.json with every requirement 1 if the project's
// where.txt says it was written in a container, the D requirements only
// if the agents' environment (committed at the checkpoint) has
// /opt/agent-installed, and refuses to score without the rubric at /tests
// or the gamecraft_bench package on PYTHONPATH.
var gamecraftStandIns = map[string]string{
	"stand-ins/godot":   "#!/bin/sh\necho '4.6.2.stable.stand-in (test double, not Godot)'\n",
	"stand-ins/Xvfb":    "#!/bin/sh\nexit 0\n",
	"stand-ins/ffmpeg":  "#!/bin/sh\nexit 0\n",
	"stand-ins/xdotool": "#!/bin/sh\nexit 0\n",
	"stand-ins/bash":    "#!/bin/sh\nexec /bin/sh \"$@\"\n",
	"stand-ins/python3": `#!/bin/sh
[ "$1" = -c ] && exit 0
[ "$1 $2" = "-m gamecraft_bench.verifier" ] || exit 2
shift 2
while [ $# -gt 0 ]; do case "$1" in --project) P=$2;; --rubric) R=$2;; --output) O=$2;; esac; shift 2; done
[ -d "$PYTHONPATH/gamecraft_bench/verifier" ] || { echo "No module named gamecraft_bench" >&2; exit 1; }
[ -f "$R" ] || { echo "no rubric at $R" >&2; exit 1; }
ok=0; [ "$(cat "$P/where.txt" 2>/dev/null)" = in-container ] && ok=1
d=0; [ -f /opt/agent-installed ] && d=$ok
reqs=""
for id in $(grep -o '"id": *"[MDVA][0-9]*"' "$R" | sed 's/.*"\([MDVA][0-9]*\)"/\1/'); do
  v=$ok; case $id in D*) v=$d;; esac
  reqs="$reqs{\"id\":\"$id\",\"aggregated\":$v,\"per_demo\":[$v]},"
done
r=0; [ $ok = 1 ] && r=0.65; [ $d = 1 ] && r=1
mkdir -p "$O"
echo "{\"reward\":$r,\"build_ok\":$ok,\"requirements\":[${reqs%,}]}" > "$O/breakdown.json"
echo $r > "$O/reward.txt"
echo "stand-in verifier scored $r"
`,
}

// gamecraftDockerfile is a task Dockerfile FROM the local busybox base
// with the stand-ins; without "godot" when noGodot.
func gamecraftDockerfile(noGodot bool) string {
	df := "FROM " + smokeBaseTag + "\nCOPY stand-ins/ /usr/local/bin/\n"
	if noGodot {
		df += "RUN rm /usr/local/bin/godot\n"
	}
	return df + "WORKDIR /app\n"
}

// viewHarness is installingHarness that also looks, from every role's
// executor, at where it runs and what it can see.
type viewHarness struct {
	installingHarness
	checkout string // the checkout's root on the host
	mu       sync.Mutex
	views    []string // "role: what it saw"
}

// viewProbe prints what an agent in the task container sees: whether it
// is in a container, and any evaluator data (tests/, a rubric, the
// verifier package, the checkout's tasks/).
const viewProbe = `[ -f /.dockerenv ] && echo container || echo host
[ -e /tests ] && echo "sees /tests"
[ -e /opt/hoh-gamecraft ] && echo "sees gamecraft_bench"
[ -e "$1/tasks" ] && echo "sees the checkout's tasks"
find / \( -path /proc -o -path /sys -o -name node_modules \) -prune -o \( -name rubric.json -o -name test.sh \) -print 2>/dev/null | sed 's/^/sees /'
[ -f /workspace/tools/screenshot.sh ] && echo tools
touch /workspace/tools/x 2>/dev/null && echo "tools writable"
true`

func (h *viewHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	var out strings.Builder
	if _, err := inv.Exec.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", viewProbe, "probe", h.checkout}, Stdout: &out, Stderr: &out}); err != nil {
		return runrecord.Result{}, err
	}
	h.mu.Lock()
	h.views = append(h.views, fmt.Sprintf("%s: %s", inv.Role, strings.Join(strings.Fields(out.String()), " ")))
	h.mu.Unlock()
	return h.installingHarness.Run(ctx, inv)
}

// GameCraft with agent_environment: docker, through the runner, on a copy
// of the real task platformer-arcborne whose environment/Dockerfile starts
// FROM the local busybox base with test-only stand-ins for Godot and the
// verifier's Python (nothing can be pulled here). Vanilla and HoH@2: every
// role runs in the task container and sees the public tools but no
// evaluator data; the Developer's project is at /workspace/game; each
// checkpoint's upstream test.sh runs in the agents' environment committed at
// that checkpoint (HoH@2's second checkpoint scores higher only because
// the Developer installed /opt/agent-installed outside the workspace) and
// its breakdown.json is scored with the task's rubric.
func TestGameCraftInDockerThroughTheRunner(t *testing.T) {
	c := dockerPrereqs(t)
	root := gamecraftCheckout(t, gamecraftDockerfile(false), gamecraftStandIns)
	develop := `[ -f /.dockerenv ] || exit 3
if [ -f /workspace/game/project.godot ]; then mkdir -p /opt && touch /opt/agent-installed || exit 5; fi
echo '[application]' > /workspace/game/project.godot && echo in-container > /workspace/game/where.txt`
	h := &viewHarness{installingHarness: installingHarness{byIteration: map[int]string{1: develop, 2: develop, 3: develop}}}
	h.checkout = root
	res, out, log := runGameCraft(t, root, h, "")
	assertRunRemoved(t, c, res.DockerRun)
	if len(res.Outcomes) != 2 {
		t.Fatalf("outcomes %+v\n%s", res.Outcomes, log)
	}
	for _, o := range res.Outcomes {
		if o.State != runrecord.StateDone {
			t.Fatalf("outcome %+v\n%s", o, log)
		}
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[fmt.Sprintf("%s@%d %s", r.Condition, r.Checkpoint, r.Metric)] = r.Value
	}
	want := map[string]float64{"vanilla@1 reward": 0.65, "hoh@1 reward": 0.65, "hoh@2 reward": 1,
		"hoh@2 depth": 100, "hoh@1 depth": 0, "hoh@1 build": 1}
	for k, v := range want {
		if g, ok := got[k]; !ok || g < v-1e-9 || g > v+1e-9 {
			t.Errorf("score %s = %v (present %v), want %v; all %v\n%s", k, g, ok, v, got, log)
		}
	}
	roles := map[string]bool{}
	for _, v := range h.views {
		role, seen, _ := strings.Cut(v, ": ")
		roles[role] = true
		if seen != "container tools" {
			t.Errorf("%s saw %q, want the container with the public tools (read-only) and no evaluator data", role, seen)
		}
	}
	if !roles[string(runrecord.RolePlanner)] || !roles[string(runrecord.RoleDeveloper)] || !roles[string(runrecord.RoleQA)] {
		t.Errorf("roles seen %v (views %q)", roles, h.views)
	}
	for _, o := range res.Outcomes {
		trialDir := filepath.Join(out, o.Trial.Dir)
		if b, err := os.ReadFile(filepath.Join(trialDir, "workspace", "where.txt")); err != nil || string(b) != "in-container\n" {
			t.Errorf("%s: the project the Developer wrote at /workspace/game: where.txt %q %v", o.Trial.Dir, b, err)
		}
		b, err := os.ReadFile(filepath.Join(trialDir, "evaluation", "cp-1-verifier.log"))
		if err != nil || !strings.Contains(string(b), "stand-in verifier scored") {
			t.Errorf("%s: test.sh's output not kept: %q %v", o.Trial.Dir, b, err)
		}
		if _, err := os.Stat(filepath.Join(trialDir, "evaluation", "cp-1-verifier", "breakdown.json")); err != nil {
			t.Errorf("%s: /logs/verifier not kept: %v", o.Trial.Dir, err)
		}
	}
}

// A task image that lacks Godot, or that cannot be built at all (the real
// environment/Dockerfile's FROM ubuntu:24.04 is not on this machine and
// nothing can be pulled), refuses the run before any trial, naming the
// task and the image, as a host run without Godot is refused.
func TestGameCraftInDockerRefusesAnUnusableImage(t *testing.T) {
	dockerPrereqs(t)
	real, err := os.ReadFile(filepath.Join(gamecraftReal(t), "tasks", "platformer-arcborne", "environment", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dockerfile string
		want             []string
	}{
		{"no godot", gamecraftDockerfile(true), []string{"task platformer-arcborne", "lacks Godot 4", "FROM " + smokeBaseTag, "godot_bin: none"}},
		{"upstream FROM ubuntu:24.04", string(real), []string{"task platformer-arcborne", "cannot be built here", "FROM ubuntu:24.04"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := gamecraftCheckout(t, tc.dockerfile, gamecraftStandIns)
			h := &viewHarness{}
			e, out := gamecraftExperiment(t, root, "")
			res, err := Run(context.Background(), e, opts(h))
			if err == nil {
				t.Fatalf("run accepted: %+v", res.Outcomes)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if res != nil && len(res.Outcomes) != 0 || h.calls != 0 || len(h.views) != 0 {
				t.Errorf("something ran: %+v calls %d", res, h.calls)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the refused run wrote its output directory: %v", err)
			}
		})
	}
}

// gamecraftExperiment writes and loads a config of vanilla and HoH@2 on the
// checkout at root with agent_environment: docker and the stub judge.
func gamecraftExperiment(t *testing.T, root, options string) (*config.Experiment, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	script := filepath.Join(repoRoot(t), "configs", "examples", "scripts", "harbor-smoke.yaml")
	cfg := `name: gamecraft-docker
output: ` + out + `
benchmark:
  kind: gamecraft
  path: ` + root + `
  options: {agent_environment: docker, judge: stub, verifier_pythonpath: ` + gamecraftReal(t) + options + `}
configs:
  - label: double
    harness: codex
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: scripted-model}
    scripted: {script: ` + script + `}
conditions: [vanilla, hoh@2]
concurrency: 1
retries: {contract: 1, infrastructure: 1, backoff: 10ms}
`
	if err := os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := config.Load(filepath.Join(dir, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return e, out
}

func runGameCraft(t *testing.T, root string, h harness.Harness, options string) (*Result, string, string) {
	t.Helper()
	e, out := gamecraftExperiment(t, root, options)
	var log strings.Builder
	o := opts(h)
	o.Out = &log
	res, err := Run(context.Background(), e, o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	return res, out, log.String()
}
