package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// installingHarness is instantHarness whose Developer also runs a shell
// command in the task container at each iteration (trials run one at a
// time here) (what an agent that
// installs software outside the workspace does).
type installingHarness struct {
	instantHarness
	byIteration map[int]string
	developed   int
	// failBefore is the iteration whose first Developer call is lost to an
	// injected infrastructure failure (the attempt is replaced).
	failBefore int
	// pidsMax is the agent container's process cap, as its cgroup says.
	pidsMax string
}

func (h *installingHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	if inv.Role == runrecord.RoleDeveloper {
		if h.developed+1 == h.failBefore {
			h.failBefore = 0
			return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: "HTTP 503 from provider (injected)"}, nil
		}
		h.developed++ // one Developer call per iteration: its output is always valid
		script := h.byIteration[h.developed]
		var out strings.Builder
		ex, err := inv.Exec.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", script}, Dir: inv.WorkDir, Stdout: &out, Stderr: &out})
		if err != nil || ex.Code != 0 {
			return runrecord.Result{}, fmt.Errorf("developer command %q: exit %d %v: %s", script, ex.Code, err, out.String())
		}
		var pids strings.Builder
		if _, err := inv.Exec.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max"}, Stdout: &pids}); err == nil {
			h.pidsMax = strings.TrimSpace(pids.String())
		}
	}
	return h.instantHarness.Run(ctx, inv)
}

// HoH@2 on Terminal-Bench 2.0's build-pmars (its real task.toml, the image
// replaced by the local busybox base): the Developer installs
// /usr/local/bin/pmars at iteration 1 and removes it at iteration 2, in an
// attempt that replaced one lost to an infrastructure failure (so it starts
// from checkpoint 1's committed environment, not the task image). Each
// checkpoint is verified in the agent container committed at that
// checkpoint, so checkpoint 1 scores 1 and checkpoint 2 scores 0, every key
// of the multi-key reward.json is kept, test.sh's output stays with the
// checkpoint's records, and no checkpoint image outlives the run.
func TestHarborCheckpointsAreVerifiedInTheirCommittedEnvironment(t *testing.T) {
	c := dockerPrereqs(t)
	root := t.TempDir()
	testenv.HarborTask(t, root, "terminal-bench-2/build-pmars", `#!/bin/sh
echo "checking pmars"
if [ "$(pmars 2>/dev/null)" = "pmars built" ]; then r=1; else r=0; fi
printf '{"reward": %s, "binary_present": %s, "speed": 0.5}\n' $r $r > /logs/verifier/reward.json
`, `docker_image = "alexgshaw/build-pmars:20251031"`, `docker_image = "`+smokeBaseTag+`"`)
	h := &installingHarness{byIteration: map[int]string{
		1: `mkdir -p /usr/local/bin && printf '#!/bin/sh\necho pmars built\n' > /usr/local/bin/pmars && chmod +x /usr/local/bin/pmars`,
		// Fails unless the replaced attempt's container started from
		// checkpoint 1's committed environment.
		2: `rm /usr/local/bin/pmars`,
	}, failBefore: 2}
	res, out, log := runHarborHoH2(t, root, h)
	assertRunRemoved(t, c, res.DockerRun)
	if len(res.Outcomes) != 1 || res.Outcomes[0].State != runrecord.StateDone {
		t.Fatalf("outcomes %+v\n%s", res.Outcomes, log)
	}
	if h.pidsMax != "321" {
		t.Errorf("the agent container's pids.max is %q, want the config's containers.pids_limit 321", h.pidsMax)
	}
	got := map[string]float64{}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		got[fmt.Sprintf("%d %s", r.Checkpoint, r.Metric)] = r.Value
	}
	want := map[string]float64{"1 reward": 1, "1 binary_present": 1, "1 speed": 0.5, "2 reward": 0, "2 binary_present": 0, "2 speed": 0.5}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("score %s = %v (present %v), want %v; all %v", k, g, ok, v, got)
		}
	}
	trialDir := filepath.Join(out, res.Outcomes[0].Trial.Dir)
	for _, cp := range []int{1, 2} {
		b, err := os.ReadFile(filepath.Join(trialDir, "evaluation", fmt.Sprintf("cp-%d-verifier", cp), "test-stdout.txt"))
		if err != nil || string(b) != "checking pmars\n" {
			t.Errorf("checkpoint %d test-stdout.txt: %q %v", cp, b, err)
		}
		if _, err := os.Stat(filepath.Join(trialDir, "evaluation", fmt.Sprintf("cp-%d-verifier", cp), "verifier", "reward.json")); err != nil {
			t.Errorf("checkpoint %d: /logs/verifier not kept: %v", cp, err)
		}
	}
	f := filters.NewArgs(filters.Arg("label", docker.LabelRun+"="+res.DockerRun))
	if ims, err := c.API.ImageList(context.Background(), image.ListOptions{All: true, Filters: f}); err != nil || len(ims) != 0 {
		t.Fatalf("checkpoint images left: %d %v", len(ims), err)
	}
}
