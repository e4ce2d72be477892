package gamecraft

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// verifyReal evaluates a one-file Godot project for a real task with
// upstream's own verifier (stub judge) in the namespace and returns hoh's
// evaluation and upstream's breakdown.json.
func verifyReal(t *testing.T, v *Verifier, out string) (runrecord.Evaluation, map[string]any) {
	t.Helper()
	b := loadReal(t)
	b.Opts.Verifier = v
	td, ok := b.Task("platformer-arcborne")
	if !ok {
		t.Fatal("platformer-arcborne is missing from the real checkout")
	}
	ws := t.TempDir()
	game := filepath.Join(ws, gameDir)
	if err := os.MkdirAll(game, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(game, "project.godot"), []byte("config_version=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := b.Evaluate(benchmark.WithOutputDir(context.Background(), out), td.Task, ws)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	for _, f := range VerifierFiles {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("verifier output %s was not kept: %v", f, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, BreakdownFile))
	if err != nil {
		t.Fatal(err)
	}
	var bd map[string]any
	if err := json.Unmarshal(raw, &bd); err != nil {
		t.Fatal(err)
	}
	// Overall and the four components as upstream's breakdown.json gives them.
	sums, counts := map[string]float64{}, map[string]float64{}
	for _, q := range bd["requirements"].([]any) {
		r := q.(map[string]any)
		l := r["id"].(string)[:1]
		sums[l] += r["aggregated"].(float64)
		counts[l]++
	}
	want := map[string]float64{"overall": 100 * bd["reward"].(float64)}
	for l, m := range map[string]string{"M": "mechanics", "D": "depth", "V": "visuals", "A": "art"} {
		if counts[l] == 0 {
			t.Fatalf("breakdown.json has no %s requirements", l)
		}
		want[m] = 100 * sums[l] / counts[l]
	}
	for m, w := range want {
		if math.Abs(ev.Metrics[m]-w) > 1e-9 {
			t.Errorf("%s: hoh recorded %v, upstream's breakdown.json gives %v", m, ev.Metrics[m], w)
		}
	}
	return ev, bd
}

func TestUpstreamVerifierWithoutGodot(t *testing.T) {
	// godot_bin names a file that does not exist; it shadows any godot on PATH.
	v := &Verifier{Judge: "stub", GodotBin: filepath.Join(t.TempDir(), "no-godot-here")}
	ev, bd := verifyReal(t, v, filepath.Join(t.TempDir(), "cp-1-verifier"))
	if bd["build_ok"] != false || ev.Metrics["build"] != 0 || ev.Metrics["overall"] != 0 {
		t.Fatalf("no Godot must fail the build gate: build_ok %v, hoh %v", bd["build_ok"], ev.Metrics)
	}
}

func TestUpstreamVerifierWithStandInGodotTwice(t *testing.T) {
	v := &Verifier{Judge: "stub", GodotBin: testenv.StandInGodot(t)}
	dir := t.TempDir()
	ev1, bd := verifyReal(t, v, filepath.Join(dir, "cp-1-verifier"))
	if bd["build_ok"] != true || ev1.Metrics["build"] != 1 {
		t.Fatalf("the stand-in Godot must pass the build gate: build_ok %v, hoh %v", bd["build_ok"], ev1.Metrics)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "cp-1-verifier", "build.log"))
	if !strings.Contains(string(log), "--path /workspace/game") {
		t.Errorf("the build check did not see /workspace/game: build.log %q", log)
	}
	ev2, _ := verifyReal(t, v, filepath.Join(dir, "cp-2-verifier"))
	a, _ := json.Marshal(ev1)
	b, _ := json.Marshal(ev2)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the same checkpoint evaluated twice differs:\n%s\n%s", a, b)
	}
}

func TestVerifierThatCannotRunIsAnEvaluationFailure(t *testing.T) {
	b := loadReal(t)
	b.Opts.Verifier = &Verifier{Judge: "stub"}
	td, _ := b.Task("platformer-arcborne")
	t.Setenv("PATH", t.TempDir()) // no python3, no unshare
	_, err := b.Evaluate(context.Background(), td.Task, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "python3 is not installed") {
		t.Fatalf("want an evaluation failure naming python3, got %v", err)
	}
}

func TestVerifierNamespaceRefusedIsAnEvaluationFailure(t *testing.T) {
	b := loadReal(t)
	b.Opts.Verifier = &Verifier{Judge: "stub"}
	td, _ := b.Task("platformer-arcborne")
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is required for this test: %v", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(python, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	// A stand-in unshare that refuses, as a host without user namespaces does.
	refuse := "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "unshare"), []byte(refuse), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	_, err = b.Evaluate(benchmark.WithOutputDir(context.Background(), filepath.Join(t.TempDir(), "cp-1-verifier")), td.Task, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "Operation not permitted") {
		t.Fatalf("want an evaluation failure with the namespace's reason, got %v", err)
	}
}

func TestJudgeKeyReachesTheVerifierButNoRecord(t *testing.T) {
	const secret = "judge-key-value-7f3a91"
	t.Setenv("HOH_TEST_JUDGE_KEY", secret)
	// A stand-in godot that passes the build gate only when the key variable
	// reached the namespace, without printing it.
	p := filepath.Join(t.TempDir(), "godot")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho stand-in godot\n[ -n \"$HOH_TEST_JUDGE_KEY\" ]\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cp-1-verifier")
	ev, _ := verifyReal(t, &Verifier{Judge: "stub", GodotBin: p, JudgeKeyEnv: "HOH_TEST_JUDGE_KEY"}, out)
	if ev.Metrics["build"] != 1 {
		t.Fatalf("the judge key variable did not reach the verifier: %v", ev.Metrics)
	}
	rec, _ := json.Marshal(ev)
	if strings.Contains(string(rec), secret) {
		t.Fatal("the judge key is in the evaluation record")
	}
	testenv.AssertNoSecret(t, secret, filepath.Dir(out))
}
