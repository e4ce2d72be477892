package trial

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/runrecord"
)

// Each host role invocation sees exactly its contract (sandbox.Confined):
// its working directory, its CLI state and the files its prompt lists. A
// shell step of each role (as an agent's tool call would run, through the
// invocation's executor) tries to read withheld evidence, another trial, the
// evaluation key and the history, and to write the history hooks, the
// evaluation cache, the Planner's D_t and the run root: none reaches the
// host, and the scores are the untampered artifact's.
func TestRoleViewsShowOnlyTheirContract(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "cfg", "wo-evidence-feedback", "greet", "rep-1")
	sibling := filepath.Join(run, "cfg", "hoh", "greet", "rep-1")
	if err := os.MkdirAll(filepath.Join(sibling, "evaluation"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sibling, "evaluation", "cp-1.json"), []byte("sibling-score"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := runrecord.TrialLayout{Dir: dir}
	probe := fmt.Sprintf(`echo "run:$(ls -A %[1]s | tr '\n' ' ')"
echo "trial:$(ls -A %[2]s | tr '\n' ' ')"
cat %[2]s/iter-01/qa/evidence.json %[2]s/.hoh-private/evaluation.key %[3]s/evaluation/cp-1.json %[2]s/history.git/HEAD 2>/dev/null && echo LEAK
echo x > %[2]s/history.git/hooks/post-commit 2>/dev/null; echo forged > %[2]s/evaluation/cp-1.json 2>/dev/null
echo x > %[1]s/ROLE-WROTE-RUNROOT 2>/dev/null; echo x > %[3]s/evaluation/cp-1.json 2>/dev/null
echo tampered > %[2]s/iter-01/planner/plan.md 2>/dev/null
echo scratch > /tmp/scratch-file && echo tmp-ok
exit 0
`, run, dir, sibling)
	h := &fakeHarness{devBroken: true, shells: map[runrecord.Role]string{
		runrecord.RolePlanner: probe, runrecord.RoleDeveloper: probe, runrecord.RoleQA: "(echo fix > greet.sh) 2>/dev/null || echo candidate-ro\n" +
			"grep -q wrote " + dir + "/iter-0*/developer/report.json && echo dev-report-shown\n" + probe}}
	spec := runrecord.TrialSpec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "wo-evidence-feedback", Checkpoint: 2}, Rep: 1}
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(t.Context())
	s, err := Run(t.Context(), dir, spec, NewEnv(
		Policy{RunDir: run},
		Place{Bench: b, Task: ts[0]},
		Route{},
		h,
		Mode{},
	))
	if err != nil {
		t.Fatal(err)
	}
	for role, outs := range h.shellOut {
		if len(outs) != 2 {
			t.Errorf("%s ran its probe %d times, want 2", role, len(outs))
		}
		for _, out := range outs {
			if strings.Contains(out, "LEAK") || !strings.Contains(out, "tmp-ok") || !strings.Contains(out, "[exit 0 <nil>]") {
				t.Errorf("%s: %s", role, out)
			}
			// The run root shows only the way down to this trial; the
			// trial only its stage directories (and the workspace for the
			// Developer).
			if !strings.Contains(out, "run:cfg \n") {
				t.Errorf("%s sees more of the run root: %s", role, out)
			}
			for _, hidden := range []string{"history.git", ".hoh-private", "evaluation", "stages.jsonl", "trial.json"} {
				if i := strings.Index(out, "trial:"); i < 0 || strings.Contains(strings.SplitN(out[i:], "\n", 2)[0], hidden) {
					t.Errorf("%s sees %s: %s", role, hidden, out)
				}
			}
		}
	}
	if out := strings.Join(h.shellOut[runrecord.RoleQA], ""); strings.Count(out, "candidate-ro") != 2 || strings.Count(out, "dev-report-shown") != 2 {
		t.Errorf("QA wrote its candidate, or does not see the developer's report: %s", out)
	}
	if _, err := os.Stat(filepath.Join(l.GitDir(), "hooks", "post-commit")); err == nil {
		t.Error("a role wrote the history's hooks")
	}
	if _, err := os.Stat(filepath.Join(run, "ROLE-WROTE-RUNROOT")); err == nil {
		t.Error("a role wrote the run root")
	}
	if b, _ := os.ReadFile(filepath.Join(sibling, "evaluation", "cp-1.json")); string(b) != "sibling-score" {
		t.Errorf("another trial's evaluation changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(l.Stage(1, "planner"), "plan.md")); strings.Contains(string(b), "tampered") {
		t.Error("a role rewrote D_1")
	}
	for _, c := range s.Checkpoints {
		if c.Metrics["pass_rate"] == 100 {
			t.Errorf("checkpoint %d: forged or repaired score recorded: %v", c.Step, c.Metrics)
		}
	}
	if len(s.Violations) != 0 {
		t.Errorf("refused attempts need no violation: %v", s.Violations)
	}
}
