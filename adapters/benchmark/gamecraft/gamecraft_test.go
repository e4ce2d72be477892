package gamecraft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/internal/testenv"
)

// realRoot is the shared GameCraft-Bench checkout; its absence fails the test.
func realRoot(t testing.TB) string {
	t.Helper()
	return filepath.Dir(testenv.SharedPath(t, "benchmarks", "gamecraft-bench", "tasks"))
}

func loadReal(t testing.TB) *Benchmark {
	t.Helper()
	b, err := Load(realRoot(t))
	if err != nil {
		t.Fatalf("Load real checkout: %v", err)
	}
	return b
}

// The five visual-novel tasks whose formulas use 0.20/0.30/0.15/0.35; found
// by reading every real rubric.json.
var visualNovelWeighted = []string{
	"visualnovel-arcaneacademy", "visualnovel-grimfable", "visualnovel-keepsake",
	"visualnovel-lastsignal", "visualnovel-pactbound",
}

var vnWeights = Weights{M: 0.20, D: 0.30, V: 0.15, A: 0.35}

func TestLoadRealCheckout(t *testing.T) {
	b := loadReal(t)
	tasks, _ := b.Tasks(context.Background())
	if len(tasks) != 140 {
		t.Fatalf("got %d tasks, want 140", len(tasks))
	}
	if len(b.Skipped) != 1 || filepath.Base(b.Skipped[0].Dir) != "example" || len(b.Excluded) != 0 {
		t.Fatalf("want only tasks/example skipped and nothing excluded: %+v %v", b.Skipped, b.Excluded)
	}
	families := map[string]int{}
	groups := map[string]map[string]bool{}
	for _, task := range tasks {
		families[task.Family]++
		if groups[task.Group] == nil {
			groups[task.Group] = map[string]bool{}
		}
		groups[task.Group][task.Family] = true
		if task.Benchmark != Name || task.Spec == "" || task.Name == "" || !strings.HasPrefix(task.ID, task.Family+"-") {
			t.Errorf("task %s: incomplete %+v", task.ID, task)
		}
		if task.Limits.AgentTimeout.Hours() != 2 {
			t.Errorf("task %s: agent timeout %s, want 2h", task.ID, task.Limits.AgentTimeout)
		}
	}
	if len(families) != 15 {
		t.Errorf("got %d families, want 15: %v", len(families), families)
	}
	if len(groups) != 5 {
		t.Errorf("got %d groups, want 5", len(groups))
	}
	for g, fams := range groups {
		if len(fams) != 3 {
			t.Errorf("group %s has families %v, want 3", g, fams)
		}
	}
	td, _ := b.Task("platformer-momentum-lab")
	if td.Task.Name != "Momentum Lab" || td.Task.Group != "Action" {
		t.Errorf("momentum lab: %+v", td.Task)
	}
	spec, _ := os.ReadFile(filepath.Join(td.Task.Dir, "instruction.md"))
	if td.Task.Spec != string(spec) {
		t.Error("Spec is not exactly instruction.md")
	}
}

func TestRealCategoryWeights(t *testing.T) {
	b := loadReal(t)
	var deviating []string
	for _, td := range b.tasks {
		if !td.Weights.Equal(paperWeights) {
			deviating = append(deviating, td.Task.ID)
			if !td.Weights.Equal(vnWeights) {
				t.Errorf("%s: weights %s are neither the paper's nor the visual-novel ones", td.Task.ID, td.Weights)
			}
		}
	}
	sort.Strings(deviating)
	if strings.Join(deviating, ",") != strings.Join(visualNovelWeighted, ",") {
		t.Errorf("tasks deviating from the paper weights: %v, want %v", deviating, visualNovelWeighted)
	}
}

// expectedWeights is the independent reference: the paper's weights except
// for the five visual-novel tasks.
func expectedWeights(id string) Weights {
	for _, v := range visualNovelWeighted {
		if v == id {
			return vnWeights
		}
	}
	return paperWeights
}

// TestRealFormulasOnSyntheticJudgeOutputs evaluates every task's formula on
// random judge scores and compares with BUILD * sum(w_c * mean_c), computed
// from the rubric's categories and the expected weights; then feeds the same
// scores as a breakdown.json through scoreBreakdown.
func TestRealFormulasOnSyntheticJudgeOutputs(t *testing.T) {
	b := loadReal(t)
	rng := rand.New(rand.NewPCG(7, 11))
	levels := []float64{0, 0.5, 1}
	for _, td := range b.tasks {
		for trial := 0; trial < 4; trial++ {
			build := 1.0
			if trial == 3 {
				build = 0
			}
			type req struct {
				ID         string    `json:"id"`
				Agg        string    `json:"agg"`
				Aggregated float64   `json:"aggregated"`
				PerDemo    []float64 `json:"per_demo"`
			}
			var reqs []req
			agg := map[string]float64{}
			for _, q := range td.Rubric.Requirements {
				demos := make([]float64, 1+rng.IntN(4))
				for i := range demos {
					demos[i] = levels[rng.IntN(3)]
				}
				a := demos[0]
				sum := 0.0
				for _, d := range demos {
					a = math.Max(a, d)
					sum += d
				}
				if q.Agg == "mean" {
					a = sum / float64(len(demos))
				}
				agg[q.ID] = a
				reqs = append(reqs, req{q.ID, q.Agg, a, demos})
			}
			means := map[string]float64{}
			for _, c := range td.Rubric.Categories {
				s := 0.0
				for _, it := range c.Items {
					s += agg[it]
				}
				means[c.Items[0][:1]] = s / float64(len(c.Items))
			}
			w := expectedWeights(td.Task.ID)
			want := build * (w.M*means["M"] + w.D*means["D"] + w.V*means["V"] + w.A*means["A"])
			want = math.Min(1, math.Max(0, want))

			vars := map[string]float64{"BUILD": build}
			for k, v := range agg {
				vars[k] = v
			}
			got, err := td.Formula.Eval(vars)
			if err != nil {
				t.Fatalf("%s: %v", td.Task.ID, err)
			}
			if math.Abs(got-want) > 1e-9 {
				t.Fatalf("%s: formula gives %v, independent computation %v", td.Task.ID, got, want)
			}
			data, _ := json.Marshal(map[string]any{
				"reward": want, "formula": td.Rubric.ScoreFormula, "build_ok": build == 1,
				"requirements": reqs, "judge": "synthetic", "demos": []string{}, "errors": []string{},
			})
			ev, err := scoreBreakdown(td, data)
			if err != nil || ev.Error != "" {
				t.Fatalf("%s: scoreBreakdown: %v %s", td.Task.ID, err, ev.Error)
			}
			if math.Abs(ev.Metrics["overall"]-100*want) > 1e-9 || ev.Metrics["build"] != build ||
				math.Abs(ev.Metrics["mechanics"]-100*means["M"]) > 1e-9 || math.Abs(ev.Metrics["art"]-100*means["A"]) > 1e-9 {
				t.Fatalf("%s: metrics %v, want overall %v", td.Task.ID, ev.Metrics, 100*want)
			}
		}
	}
}

func miniBenchmark(t *testing.T, opts Options) *Benchmark {
	t.Helper()
	b, err := Load("testdata/mini")
	if err != nil {
		t.Fatal(err)
	}
	b.Opts = opts
	return b
}

func TestScoreBreakdownReportsMismatches(t *testing.T) {
	b := miniBenchmark(t, Options{})
	td, _ := b.Task("platformer-paper-kite")
	data := `{"reward": 0.9, "build_ok": true, "requirements": [
		{"id":"M1","agg":"max","aggregated":1,"per_demo":[0,1]},
		{"id":"M2","agg":"mean","aggregated":1,"per_demo":[0.5,1]},
		{"id":"D1","agg":"max","aggregated":0.5,"per_demo":[{"score":0.5}]},
		{"id":"V1","agg":"mean","aggregated":0,"per_demo":{"demo1":0}},
		{"id":"A1","agg":"max","aggregated":1,"per_demo":[1]},
		{"id":"Z9","agg":"max","aggregated":1,"per_demo":[1]}]}`
	ev, err := scoreBreakdown(td, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	// M=(1+1)/2, D=0.5, V=0, A=(1+0)/2 (A2 missing scores 0).
	want := 0.15*1 + 0.35*0.5 + 0.15*0 + 0.35*0.5
	if math.Abs(ev.Metrics["reward"]-want) > 1e-12 || math.Abs(ev.Metrics["overall"]-100*want) > 1e-9 {
		t.Errorf("reward %v, want %v", ev.Metrics["reward"], want)
	}
	for _, frag := range []string{"reward mismatch", "requirement M2: aggregated 1 but mean", "A2 is missing", "Z9, which the rubric lacks"} {
		if !strings.Contains(ev.Error, frag) {
			t.Errorf("Error %q lacks %q", ev.Error, frag)
		}
	}
	if _, err := scoreBreakdown(td, []byte(`{"reward": "x"}`)); err == nil {
		t.Error("malformed breakdown.json accepted")
	}
	// Build gate off: score 0 whatever the judge said; clamp keeps [0,1].
	ev, _ = scoreBreakdown(td, []byte(`{"reward":0,"build_ok":false,"requirements":[{"id":"M1","agg":"max","aggregated":1,"per_demo":[1]}]}`))
	if ev.Metrics["overall"] != 0 || ev.Metrics["build"] != 0 || ev.Metrics["mechanics"] != 50 {
		t.Errorf("build gate: %v", ev.Metrics)
	}
}

func TestEvaluateReadsVerifierOutputOutsideWorkspace(t *testing.T) {
	verifier := t.TempDir()
	b := miniBenchmark(t, Options{GodotBin: "/nonexistent/godot",
		VerifierOutput: func(benchmark.Task, string) string { return verifier }})
	td, _ := b.Task("visualnovel-tea-house")
	body := `{"reward": 0.35, "build_ok": 1, "requirements": [
		{"id":"M1","agg":"max","aggregated":1,"per_demo":[1]},
		{"id":"D1","agg":"mean","aggregated":0.5,"per_demo":[0,1]},
		{"id":"D2","agg":"max","aggregated":0.5,"per_demo":[0.5]},
		{"id":"V1","agg":"max","aggregated":0,"per_demo":[]},
		{"id":"A1","agg":"max","aggregated":0,"per_demo":[0]}]}`
	if err := os.WriteFile(filepath.Join(verifier, BreakdownFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	ev, err := b.Evaluate(context.Background(), td.Task, ws)
	if err != nil || ev.Error != "" {
		t.Fatalf("Evaluate: %v %q", err, ev.Error)
	}
	if want := 100 * (0.20*1 + 0.30*0.5); math.Abs(ev.Metrics["overall"]-want) > 1e-9 {
		t.Errorf("overall %v, want %v", ev.Metrics["overall"], want)
	}
	// A verifier folder inside the workspace would let the agent plant a score.
	b.Opts.VerifierOutput = func(benchmark.Task, string) string { return filepath.Join(ws, "logs") }
	if _, err := b.Evaluate(context.Background(), td.Task, ws); err == nil {
		t.Error("verifier output inside the workspace accepted")
	}
}

func TestEvaluateWithoutGodotOrJudge(t *testing.T) {
	b := miniBenchmark(t, Options{GodotBin: "/nonexistent/godot"})
	td, _ := b.Task("platformer-paper-kite")
	ev, err := b.Evaluate(context.Background(), td.Task, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ev.Metrics["overall"] != 0 || !strings.Contains(ev.Error, godotMissing) || !strings.Contains(ev.Error, "cannot be scored") {
		t.Errorf("got %v %q", ev.Metrics, ev.Error)
	}
	res, _ := b.Check(context.Background(), td.Task, t.TempDir())
	if len(res) != 1 || !res[0].Unavailable || res[0].Passed || !strings.Contains(res[0].Output, godotMissing) {
		t.Errorf("check without godot: %+v", res)
	}
}

// fakeGodot writes a script that answers --version like Godot 4 and, for a
// launch, fails on a project whose main scene mentions BROKEN.
func fakeGodot(t *testing.T, version string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "godot")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = "--version" ]; then echo %q; exit 0; fi
dir=""
while [ $# -gt 0 ]; do [ "$1" = "--path" ] && dir="$2"; shift; done
echo "Godot Engine v4.6.2.stable - https://godotengine.org"
if grep -q BROKEN "$dir/project.godot"; then echo "SCRIPT ERROR: Parse Error: unexpected token"; exit 0; fi
if grep -q CRASH "$dir/project.godot"; then exit 3; fi
exit 0
`, version)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckRunsGodotBuild(t *testing.T) {
	b := miniBenchmark(t, Options{GodotBin: fakeGodot(t, "4.6.2.stable.official")})
	td, _ := b.Task("platformer-paper-kite")
	ctx := context.Background()
	for _, c := range []struct {
		project string
		passed  bool
		exit    int
	}{{"[application]\n", true, 0}, {"BROKEN\n", false, 0}, {"CRASH\n", false, 3}} {
		ws := t.TempDir()
		if err := b.InitialWorkspace(ctx, td.Task, ws); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, gameDir, "project.godot"), []byte(c.project), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := b.Check(ctx, td.Task, ws)
		if err != nil || len(res) != 1 {
			t.Fatal(err)
		}
		if res[0].Passed != c.passed || res[0].ExitCode != c.exit || res[0].Unavailable {
			t.Errorf("%q: %+v", c.project, res[0])
		}
		if !strings.Contains(res[0].Command, "--headless --path "+filepath.Join(ws, gameDir)+" --quit-after 5") {
			t.Errorf("command %q", res[0].Command)
		}
	}
	// A Godot 3 binary is not accepted as Godot 4.
	b.Opts.GodotBin = fakeGodot(t, "3.5.3.stable")
	res, _ := b.Check(ctx, td.Task, t.TempDir())
	if !res[0].Unavailable {
		t.Errorf("godot 3 accepted: %+v", res[0])
	}
}

// TestRubricNeverLeaks proves that no rubric requirement text, score formula
// or build-gate description reaches a Spec, the initial workspace or a
// CheckResult, for all 140 real tasks (with and without a Godot binary).
func TestRubricNeverLeaks(t *testing.T) {
	b := loadReal(t)
	ctx := context.Background()
	withGodot := *b
	withGodot.Opts.GodotBin = fakeGodot(t, "4.6.2.stable")
	b.Opts.GodotBin = "/nonexistent/godot"
	for _, td := range b.tasks {
		secrets := []string{td.Rubric.ScoreFormula, td.Rubric.BuildCheck.Description, "Score 0.5 at most", "Score 1 requires"}
		for _, q := range td.Rubric.Requirements {
			secrets = append(secrets, q.Description)
		}
		var texts []string
		texts = append(texts, td.Task.Spec)
		ws := t.TempDir()
		if err := b.InitialWorkspace(ctx, td.Task, ws); err != nil {
			t.Fatal(err)
		}
		err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			texts = append(texts, p)
			if !d.IsDir() {
				data, err := os.ReadFile(p)
				texts = append(texts, string(data))
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, bench := range []*Benchmark{b, &withGodot} {
			res, err := bench.Check(ctx, td.Task, ws)
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(res)
			texts = append(texts, string(js))
		}
		task, _ := json.Marshal(td.Task)
		texts = append(texts, string(task))
		for _, text := range texts {
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Fatalf("%s: rubric text %.60q leaked", td.Task.ID, s)
				}
			}
		}
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	cases := []struct {
		name, file, content, want string
	}{
		{"unknown toml field", "task.toml", "schema_version = \"1.2\"\n[task]\nname = \"x\"\n[environment]\ngpu_count = 1\n", "unknown field(s): environment.gpu_count"},
		{"malformed toml", "task.toml", "schema_version = \"1.2\"\n[task]\nname = = \"x\"\n", "task.toml:3:"},
		{"malformed json", "tests/rubric.json", "{\n\"score_formula\": \"BUILD\",\n}", "rubric.json:3:"},
		{"unknown rubric field", "tests/rubric.json", `{"score_formula": "BUILD", "weights": {}}`, `unknown field "weights"`},
		{"bad formula", "tests/rubric.json", `{"score_formula": "BUILD * (M1 +", "requirements": [{"id":"M1","agg":"max"}], "categories": [{"name":"m","items":["M1"]}]}`, "column 14"},
		{"unknown identifier", "tests/rubric.json", `{"score_formula": "BUILD * M1 * X2", "requirements": [{"id":"M1","agg":"max"}], "categories": [{"name":"m","items":["M1"]}]}`, `column 14: unknown identifier "X2"`},
		{"missing instruction", "instruction.md", "", "instruction.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			src := "testdata/mini/tasks/platformer-paper-kite"
			dst := filepath.Join(root, "tasks", "platformer-paper-kite")
			if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dst, c.file)
			if err := os.Chmod(target, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.content == "" {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(target, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(root)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dst) {
				t.Fatalf("got %v, want an error naming %s containing %q", err, dst, c.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("error is not a FileError: %T", err)
			}
		})
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("empty root accepted")
	}
}

func TestNonTaskFoldersAreSkippedAndMalformedTasksExcluded(t *testing.T) {
	root := t.TempDir()
	for _, slug := range []string{"platformer-paper-kite", "visualnovel-tea-house"} {
		if err := os.CopyFS(filepath.Join(root, "tasks", slug), os.DirFS(filepath.Join("testdata/mini/tasks", slug))); err != nil {
			t.Fatal(err)
		}
	}
	broken := filepath.Join(root, "tasks", "visualnovel-tea-house", "tests", "rubric.json")
	os.Chmod(broken, 0o644)
	if err := os.WriteFile(broken, []byte("{\n\"score_formula\": \"BUILD\",\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "tasks", "example")
	if err := os.MkdirAll(example, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Load(root)
	if err != nil {
		t.Fatalf("one malformed task must not stop the rest: %v", err)
	}
	tasks, _ := b.Tasks(context.Background())
	if len(tasks) != 1 || tasks[0].ID != "platformer-paper-kite" {
		t.Fatalf("tasks: %+v", tasks)
	}
	notes := strings.Join(b.LoadNotes(), "\n")
	if !strings.Contains(notes, "skipped "+example+": not a task") || !strings.Contains(notes, "excluded a malformed task: "+broken+":3:") {
		t.Fatalf("notes must name the skipped folder and the malformed file:\n%s", notes)
	}
	rep := conformance.Report{Root: root}
	checkConformance(&rep)
	var sev []string
	for _, p := range rep.Problems {
		sev = append(sev, string(p.Severity)+" "+p.Path)
	}
	got := strings.Join(sev, "\n")
	if !strings.Contains(got, "error "+broken) || !strings.Contains(got, "notice "+example) || len(rep.Tasks) != 1 {
		t.Fatalf("conformance must report the malformed task as an error and the example as a notice:\n%s", got)
	}
}

func TestMiniFixtureLimits(t *testing.T) {
	b := miniBenchmark(t, Options{})
	td, _ := b.Task("visualnovel-tea-house")
	if td.Task.Limits.GPUs != 1 || !td.Task.Limits.AllowInternet || td.Task.Group != "Adventure" || !td.Weights.Equal(vnWeights) {
		t.Errorf("tea house: %+v %s", td.Task, td.Weights)
	}
	kite, _ := b.Task("platformer-paper-kite")
	if kite.Task.Limits.AllowInternet || kite.Task.Limits.CPUs != 2 || kite.Task.Limits.AgentTimeout.Seconds() != 300 {
		t.Errorf("kite limits: %+v", kite.Task.Limits)
	}
}
