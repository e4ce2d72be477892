package trial

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// boundsAttack is a Developer's shell step that meets each bound of its
// invocation: 300 processes (each lives 2 s), a process touching 256 MiB,
// 64 MiB written into /tmp. Each is harmless to the machine if its bound
// failed, and each shows whether it was refused.
const boundsAttack = `sh -c 'i=0; while [ $i -lt 300 ]; do sleep 2 & i=$((i+1)); done; wait' > /tmp/bomb.log 2>&1
until /bin/true 2>/dev/null; do :; done
grep -qi 'fork\|resource temporarily' /tmp/bomb.log && echo bomb-refused
/usr/bin/python3 -c 'x = [b"x" * (16 << 20) for i in range(16)]; print("ALLOCATED-ALL")' || echo hog-ended
dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>/dev/null; echo "tmp-bytes:$(stat -c %s /tmp/fill)"
exit 0
`

// A Developer that meets its process, memory and /tmp bounds gets each
// refused as its own invocation's outcome: its trial goes on to its
// score, and a trial running at the same time completes with its own.
func TestTrialSurvivesARoleMeetingItsBounds(t *testing.T) {
	limits := sandbox.Limits{Procs: 64, Memory: 64 << 20, Tmp: 8 << 20}
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	run := t.TempDir()
	hogs := &fakeHarness{shells: map[runrecord.Role]string{runrecord.RoleDeveloper: boundsAttack}}
	calm := &fakeHarness{shells: map[runrecord.Role]string{runrecord.RoleDeveloper: "echo calm"}}
	var wg sync.WaitGroup
	sums := make([]*runrecord.Summary, 2)
	errs := make([]error, 2)
	for i, h := range []*fakeHarness{hogs, calm} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := runrecord.TrialSpec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "hoh", Checkpoint: 1}, Rep: i + 1}
			sums[i], errs[i] = Run(context.Background(), filepath.Join(run, "rep", string(rune('1'+i))), spec,
				NewEnv(Policy{RunDir: run, Limits: limits}, Place{Bench: b, Task: ts[0]}, Route{}, h, Mode{}))
		}()
	}
	wg.Wait()
	for i, s := range sums {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if s.Status != runrecord.StatusCompleted || len(s.Checkpoints) != 1 || s.Checkpoints[0].Metrics["pass_rate"] != 100 {
			t.Errorf("trial %d: %s %s %+v", i+1, s.Status, s.Reason, s.Checkpoints)
		}
	}
	out := strings.Join(hogs.shellOut[runrecord.RoleDeveloper], "")
	t.Logf("the Developer's step: %s", out)
	for _, want := range []string{"bomb-refused", "hog-ended", "tmp-bytes:", "[exit 0 <nil>]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the Developer's step does not show %q: %s", want, out)
		}
	}
	if i := strings.Index(out, "tmp-bytes:"); i >= 0 {
		var n int64
		if _, err := fmt.Sscan(out[i+len("tmp-bytes:"):], &n); err != nil || n <= 0 || n > 8<<20 {
			t.Errorf("/tmp took %d bytes against a bound of 8 MiB (%v)", n, err)
		}
	}
	if strings.Contains(out, "ALLOCATED-ALL") {
		t.Error("the memory hog got its 256 MiB")
	}
	if got := strings.Join(calm.shellOut[runrecord.RoleDeveloper], ""); !strings.Contains(got, "calm\n[exit 0 <nil>]") {
		t.Errorf("the concurrent trial's Developer: %q", got)
	}
}
