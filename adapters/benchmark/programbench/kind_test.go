package programbench

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/kind"
)

// The evaluator options reach the DockerEvaluator; eval_image defaults to
// agent_image and tests_root is resolved against the config's folder.
func TestKindOptionsGiveTheEvaluatorSettings(t *testing.T) {
	vals, errs := Kind.ParseOptions(map[string]any{"agent_image": "agent:1", "tests_root": "tests",
		"compile_timeout": "3m", "eval_cpus": 2, "eval_memory_mb": 512}, func(p string) string { return "/cfg/" + p })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ev := evaluator(vals)
	if ev.Image != "agent:1" || ev.TestsRoot != "/cfg/tests" || ev.CompileTimeout != 3*time.Minute ||
		ev.TestTimeout != 0 || ev.CPUs != 2 || ev.MemoryMB != 512 {
		t.Fatalf("evaluator settings %+v", ev)
	}
	if ev.Images.Repo != "programbench" {
		t.Fatalf("upstream's per-instance images are looked for by default: %+v", ev.Images)
	}
	if ev := evaluator(kind.NewValues(map[string]any{"instance_images": "none"})); ev.Images.Repo != "" {
		t.Fatalf("instance_images none disables them: %+v", ev.Images)
	}
	if ev := evaluator(kind.NewValues(map[string]any{"agent_image": "a", "eval_image": "e"})); ev.Image != "e" {
		t.Fatalf("eval_image must win over agent_image: %+v", ev)
	}
}
