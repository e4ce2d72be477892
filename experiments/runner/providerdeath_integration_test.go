package runner

// Integration test: the REAL Codex CLI against a scripted TEST-DOUBLE
// provider configured as a real endpoint, which the test stops mid-run.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// A provider that dies mid-trial (connections refused from then on) costs
// the trial replaced attempts and, once they are used up, a runner failure:
// never a score row, never a completed trial.
func TestProviderDyingMidRunIsReplacedNeverScored(t *testing.T) {
	bin := clienv.CLI(t, "codex")
	root := testenv.RepoRoot(t)
	script, err := scripted.LoadScript(filepath.Join(root, "configs/examples/scripts/local-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.Start(script, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("HOH_DYING_KEY", "hoh-dying-provider-dummy-key")
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(`name: dying
output: run
benchmark: {kind: builtin}
tasks: {ids: [greet]}
configs:
  - label: codex-lab
    harness: codex
    binary: `+bin+`
    provider: {name: lab, api: responses, base_url: "`+srv.URL()+`/v1", key_env: HOH_DYING_KEY, model: scripted-model}
conditions: [hoh@2]
timeouts: {planner: 3m, developer: 3m, qa: 3m, idle: 2m}
retries: {contract: 1, infrastructure: 1, backoff: 100ms}
`), 0o644)
	e, err := config.Load(filepath.Join(dir, "exp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if committedStages(out) >= 1 {
				srv.Close()
				return
			}
		}
	}()
	res, err := Run(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outcomes) != 1 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	o := res.Outcomes[0]
	if o.State != runrecord.StateFailed || o.Status != "" || !strings.Contains(o.Reason, "infrastructure failure persisted") {
		t.Fatalf("the trial after its provider died: %+v", o)
	}
	reps, _ := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	if len(reps) != 1 || reps[0].Key != o.Trial.Key {
		t.Errorf("replacements %+v", reps)
	}
	if rows, err := os.ReadFile(filepath.Join(out, "scores.csv")); err == nil && strings.Count(string(rows), "\n") > 1 {
		t.Errorf("score rows from a trial whose provider died:\n%s", rows)
	}
	if _, err := os.Stat(filepath.Join(out, o.Trial.Dir, "summary.json")); err == nil {
		t.Error("the trial has a summary: its dead-provider attempts became a result")
	}
	testenv.AssertNoSecret(t, "hoh-dying-provider-dummy-key", out)
}
