package programbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
)

const calcID = "hohtest__calc.0000001"

// dockerClient connects with a run label of its own and checks at the end
// that no container or image carrying it is left.
func dockerClient(t *testing.T) *docker.Client {
	t.Helper()
	return dockerenv.Client(t, "pb")
}

// busyboxImage builds the toy's evaluation image locally (no pulls).
func busyboxImage(t *testing.T, c *docker.Client) string {
	t.Helper()
	return dockerenv.BusyboxImage(t, c, "")
}

// submission is A_0 (the clean-room executable and docs) plus, for a named
// submission, the correct one's files overlaid with testdata/calc/submissions/<name>.
func submission(t *testing.T, b *Benchmark, name string) string {
	t.Helper()
	task := taskOf(mustInstance(t, b))
	dir := t.TempDir()
	if err := b.InitialWorkspace(context.Background(), task, dir); err != nil {
		t.Fatal(err)
	}
	if name != "" {
		layers := []string{name}
		if name != "correct" {
			layers = []string{"correct", name}
		}
		for _, layer := range layers {
			if err := overlay(dir, filepath.Join("testdata", "calc", "submissions", layer)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func mustInstance(t *testing.T, b *Benchmark) *Instance {
	in, ok := b.Instance(calcID)
	if !ok {
		t.Fatal("fixture instance missing")
	}
	return in
}

// calcInDocker loads the synthetic calculator and an evaluator of its tests
// without an image, and builds the busybox image it can use.
func calcInDocker(t *testing.T) (*docker.Client, string, *Benchmark, DockerEvaluator) {
	c := dockerClient(t)
	img := busyboxImage(t, c)
	b, err := Load(filepath.Join("testdata", "calc"))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "calc", "eval-tests"))
	return c, img, b, DockerEvaluator{Docker: c, TestsRoot: abs, CompileTimeout: time.Minute, TestTimeout: time.Minute, MemoryMB: 128}
}

// The synthetic calculator runs end to end in Docker: clean-room A_0, a
// submission, eval_clean_hashes, compile in a fresh container, one fresh
// container per active branch, JUnit, and the committed scoring.
func TestCalculatorEndToEndInDocker(t *testing.T) {
	_, img, b, ev := calcInDocker(t)
	ev.Image = img
	b.Opts.Runner = ev.Run
	task := taskOf(mustInstance(t, b))

	// A_0 holds no evaluator-only files.
	a0 := submission(t, b, "")
	filepath.Walk(a0, func(p string, info os.FileInfo, err error) error {
		rel, _ := filepath.Rel(a0, p)
		if err == nil && (strings.Contains(rel, "eval") || strings.Contains(rel, "src") || rel == "compile.sh") {
			t.Errorf("evaluator-only file in A_0: %s", p)
		}
		return nil
	})

	cases := []struct {
		name      string
		passRate  float64
		passed    float64
		errorCode string
	}{
		{"correct", 100, 4, ""},
		{"broken", 75, 3, ""},
		{"", 0, 0, CompileFailed},
		{"cheat", 0, 0, copyExecutableFailed},
		// ./executable exists and works, but compile.sh failed: upstream scores 0.
		{"compile-fails", 0, 0, CompileFailed},
		// The executable needs what compile.sh installed outside the workspace.
		{"build-output", 100, 4, ""},
	}
	for _, tc := range cases {
		label := tc.name
		if label == "" {
			label = "missing-compile"
		}
		t.Run(label, func(t *testing.T) {
			got, err := b.Evaluate(context.Background(), task, submission(t, b, tc.name))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := got.Details["eval_json"].(string)
			if got.Error != "" || got.Metrics["pass_rate"] != tc.passRate || got.Metrics["tests_passed"] != tc.passed || got.Metrics["tests_total"] != 4 {
				t.Fatalf("metrics %v error %q\n%s", got.Metrics, got.Error, raw)
			}
			if err := validateUpstreamEval([]byte(raw)); err != nil {
				t.Fatalf("eval.json rejected by upstream's model: %v\n%s", err, raw)
			}
			var out evalOutput
			if err := json.Unmarshal([]byte(raw), &out); err != nil {
				t.Fatal(err)
			}
			code := ""
			if out.ErrorCode != nil {
				code = *out.ErrorCode
			}
			if recorded, _ := got.Details["error_code"].(string); code != tc.errorCode || recorded != tc.errorCode {
				t.Errorf("error_code %q (recorded %q), want %q", code, recorded, tc.errorCode)
			}
			if tc.errorCode != "" {
				for _, r := range out.TestResults {
					if r.Status != "not_run" || r.Extra["error_code"] != tc.errorCode {
						t.Errorf("after %s every test is not_run with that code: %+v", tc.errorCode, r)
					}
				}
			}
			if tc.name == "cheat" && !strings.Contains(out.Log[0].Output, "executable") {
				t.Errorf("the original executable was not removed by hash: %+v", out.Log[0])
			}
			if tc.name == "correct" && (out.ExecutableHash == nil || len(out.TestBranches) != 1 || out.TestBranches[0] != "b1f00d000001") {
				t.Errorf("eval.json: hash %v branches %v", out.ExecutableHash, out.TestBranches)
			}
		})
	}
}

// Upstream's per-instance :task image is used when present locally: with no
// eval_image the evaluation fails naming it, and once it exists (here the
// toy's busybox image tagged with upstream's name) it scores the submission.
func TestInstanceTaskImageIsUsedWhenPresent(t *testing.T) {
	c, img, b, ev := calcInDocker(t)
	repo := "hohtest-pb-" + c.RunID()
	ref := upstreamImage(repo, calcID, TaskTag)
	if ref != repo+"/hohtest_1776_calc.0000001:task" {
		t.Fatalf("upstream image name %q", ref)
	}
	exists := func(ctx context.Context, r string) bool { _, err := c.API.ImageInspect(ctx, r); return err == nil }
	ev.Images = InstanceImages{Repo: repo, Exists: exists}
	b.Opts.Runner = ev.Run
	task := taskOf(mustInstance(t, b))
	got, err := b.Evaluate(context.Background(), task, submission(t, b, "correct"))
	if err != nil || !strings.Contains(got.Error, ref) {
		t.Fatalf("without the image or eval_image the error must name %s: %q %v", ref, got.Error, err)
	}
	ctx := context.Background()
	if err := c.API.ImageTag(ctx, img, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.API.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
	got, err = b.Evaluate(ctx, task, submission(t, b, "correct"))
	if err != nil || got.Error != "" || got.Metrics["pass_rate"] != 100 {
		t.Fatalf("with %s present: %v %q %v\n%v", ref, got.Metrics, got.Error, err, got.Details["eval_json"])
	}
	b.Opts.Images, b.Opts.AgentImage = ev.Images, "agent:fallback"
	if agent, _, err := b.ContainerImage(ctx, task); err != nil || agent != "agent:fallback" {
		t.Fatalf("without a local :task_cleanroom image the agent runs agent_image: %q %v", agent, err)
	}
	clean := upstreamImage(repo, calcID, cleanroomTag)
	if err := c.API.ImageTag(ctx, img, clean); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.API.ImageRemove(context.Background(), clean, image.RemoveOptions{}) })
	if agent, _, err := b.ContainerImage(ctx, task); err != nil || agent != clean {
		t.Fatalf("the local :task_cleanroom image must be the agent's: %q %v", agent, err)
	}
}

// overlay copies src's files into dst, replacing files that exist.
func overlay(dst, src string) error {
	return filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := e.Info()
		os.Remove(target)
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
