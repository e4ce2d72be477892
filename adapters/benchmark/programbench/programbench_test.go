package programbench

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// sharedRoot is the shared ProgramBench checkout; its absence fails the test.
func sharedRoot(t testing.TB) string {
	t.Helper()
	return filepath.Dir(testenv.SharedPath(t, "benchmarks", "programbench", "tasks"))
}

func TestStripTrailingCommas(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[1, 2,]`, `[1, 2]`},
		{`{"a": 1 , }`, `{"a": 1  }`},
		{"{\"a\": [1,\n ],\n}", "{\"a\": [1\n ]\n}"},
		{`["a,]", "b,}",]`, `["a,]", "b,}"]`},
		{`{"k": "x\",]", "j": 2,}`, `{"k": "x\",]", "j": 2}`},
		{`{"k": "back\\", "z": [],}`, `{"k": "back\\", "z": []}`},
		{`[1,2]`, `[1,2]`},
		{`"unterminated ,]`, `"unterminated ,]`},
	}
	for _, c := range cases {
		if got := string(stripTrailingCommas([]byte(c.in))); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		var v any
		if strings.HasPrefix(c.in, `"unterminated`) {
			continue
		}
		if err := json.Unmarshal(stripTrailingCommas([]byte(c.in)), &v); err != nil {
			t.Errorf("%q: result is not JSON: %v", c.in, err)
		}
	}
}

func TestAllRealFilesLoad(t *testing.T) {
	root := sharedRoot(t)
	b, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := b.Tasks(context.Background())
	yamls, _ := filepath.Glob(filepath.Join(root, "tasks", "*", "task.yaml"))
	jsons, _ := filepath.Glob(filepath.Join(root, "tasks", "*", "tests.json"))
	if len(tasks) != len(yamls) || len(tasks) != 201 {
		t.Fatalf("loaded %d instances, %d task.yaml files (want 201)", len(tasks), len(yamls))
	}
	withTests := 0
	for _, in := range b.instances {
		if in.Tests != nil {
			withTests++
			if len(in.Tests.Branches) == 0 {
				t.Errorf("%s: tests.json has no branches", in.ID)
			}
		}
	}
	if withTests != len(jsons) || withTests != 36 {
		t.Errorf("%d instances with tests, %d tests.json files (want 36)", withTests, len(jsons))
	}
	for _, task := range tasks {
		if task.Limits.AllowInternet || task.Spec != Spec || strings.Contains(task.Spec, task.Name) {
			t.Errorf("%s: %+v", task.ID, task)
		}
	}
}

// expectedFixtureRate computes the pass rate of an eval.json by the
// benchmark's rule straight from the JSON, independently of scoreResults.
func expectedFixtureRate(t *testing.T, evalPath, testsPath string) float64 {
	var tests struct {
		Branches map[string]struct {
			Ignored      bool `json:"ignored"`
			IgnoredTests []struct {
				Name string `json:"name"`
			} `json:"ignored_tests"`
		} `json:"branches"`
	}
	raw, _ := os.ReadFile(testsPath)
	if err := json.Unmarshal(stripTrailingCommas(raw), &tests); err != nil {
		t.Fatal(err)
	}
	var ev struct {
		TestResults []map[string]any `json:"test_results"`
	}
	raw, _ = os.ReadFile(evalPath)
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	passed, total := 0, 0
	for _, r := range ev.TestResults {
		br, ok := tests.Branches[r["branch"].(string)]
		if !ok || br.Ignored {
			continue
		}
		skip := false
		for _, it := range br.IgnoredTests {
			skip = skip || it.Name == r["name"]
		}
		if skip {
			continue
		}
		total++
		if r["status"] == "passed" {
			passed++
		}
	}
	if total == 0 {
		return 0
	}
	return 100 * float64(passed) / float64(total)
}

func TestRealFixturesScore(t *testing.T) {
	root := sharedRoot(t)
	b, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	const id = "testorg__calculator.abc1234"
	in, _ := b.Instance(id)
	got := map[string]float64{}
	for _, kind := range []string{"correct", "incorrect"} {
		path := filepath.Join(root, "test_runs", kind, id+".eval.json")
		s, r, err := scoreEvalFile(in, path)
		if err != nil {
			t.Fatal(err)
		}
		want := expectedFixtureRate(t, path, filepath.Join(in.Dir, "tests.json"))
		if math.Abs(s.PassRate()-want) > 1e-9 {
			t.Errorf("%s: pass rate %v, independent %v", kind, s.PassRate(), want)
		}
		if r.ErrorCode != nil {
			t.Errorf("%s: error code %v", kind, *r.ErrorCode)
		}
		got[kind] = s.PassRate()
	}
	// The fixtures' JUnit names carry an "eval." prefix, so the tests.json
	// names come back not_run: by the benchmark's rule the correct run scores
	// 3 passed of 6 results, the incorrect one 0.
	if got["correct"] != 50 || got["incorrect"] != 0 {
		t.Errorf("fixture rates %v, want correct 50, incorrect 0", got)
	}
}

func loadMini(t *testing.T) (*Benchmark, *Instance) {
	t.Helper()
	b, err := Load("testdata/mini")
	if err != nil {
		t.Fatal(err)
	}
	in, ok := b.Instance("hohtest__toy.0000001")
	if !ok {
		t.Fatal("fixture instance missing")
	}
	return b, in
}

func TestScoreDropsIgnored(t *testing.T) {
	_, in := loadMini(t)
	if !in.Tests.Branches["b2"].Ignored || len(in.Tests.Branches["b1"].IgnoredTests) != 1 {
		t.Fatalf("lenient tests.json parsed wrongly: %+v", in.Tests)
	}
	results := []TestResult{
		{Name: "tests.test_toy.test_echo", Branch: "b1", Status: "passed"},
		{Name: "tests.test_toy.test_flags", Branch: "b1", Status: "skipped"},
		{Name: "tests.test_toy.test_flaky", Branch: "b1", Status: "passed"}, // ignored test
		{Name: "tests.test_old.test_a", Branch: "b2", Status: "passed"},     // ignored branch
	}
	s := scoreResults(results, in.Tests)
	if s.Passed != 1 || s.Total != 2 || s.Dropped != 2 || s.PassRate() != 50 {
		t.Errorf("score %+v", s)
	}
	if s := scoreResults(nil, in.Tests); s.Rate != 0 {
		t.Errorf("empty: %+v", s)
	}
}

func TestJUnitBranches(t *testing.T) {
	_, in := loadMini(t)
	dir := t.TempDir()
	xmlPath := filepath.Join(dir, "results.xml")
	xmlText := `<?xml version="1.0"?><testsuites><testsuite name="pytest">
	<testcase classname="tests.test_toy" name="test_echo"/>
	<testcase classname="tests.test_toy" name="test_flaky"><failure message="x"/></testcase>
	</testsuite></testsuites>`
	if err := os.WriteFile(xmlPath, []byte(xmlText), 0o644); err != nil {
		t.Fatal(err)
	}
	s, results, err := scoreJUnitBranches(in, map[string]string{"b1": xmlPath})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, r := range results {
		status[r.Name] = r.Status
	}
	if status["tests.test_toy.test_echo"] != "passed" || status["tests.test_toy.test_flags"] != "not_run" || status["tests.test_toy.test_flaky"] != "failure" {
		t.Errorf("statuses %v", status)
	}
	// echo passed, flags not run; flaky is ignored; b2 is an ignored branch.
	if s.Passed != 1 || s.Total != 2 {
		t.Errorf("score %+v", s)
	}
	// A branch with no results file counts its tests as not run.
	s, _, _ = scoreJUnitBranches(in, nil)
	if s.Passed != 0 || s.Total != 2 {
		t.Errorf("no results: %+v", s)
	}
	if _, _, err := scoreJUnitBranches(in, map[string]string{"b1": filepath.Join(dir, "absent.xml")}); err == nil {
		t.Error("missing results file accepted")
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]string{"a", "b", "c", "d"}, map[string]float64{"a": 100, "b": 96, "c": 50})
	if s.Scored != 3 || s.Resolved != 1 || s.AlmostResolved != 2 || math.Abs(s.AvgPassRate-246.0/4) > 1e-12 {
		t.Errorf("%+v", s)
	}
	if summarize(nil, nil).AvgPassRate != 0 {
		t.Error("empty summary")
	}
}

func TestCleanroomWorkspace(t *testing.T) {
	b, in := loadMini(t)
	ws := t.TempDir()
	if err := b.InitialWorkspace(context.Background(), taskOf(in), ws); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ws, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(files)
	if strings.Join(files, ",") != "README.md,docs/usage.md,executable" {
		t.Errorf("workspace holds %v, want executable and docs only", files)
	}
	if info, _ := os.Stat(filepath.Join(ws, "executable")); info.Mode().Perm()&0o100 == 0 {
		t.Error("executable lost its mode")
	}
	b.Opts.CleanroomRoot = t.TempDir()
	if err := b.InitialWorkspace(context.Background(), taskOf(in), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no clean-room executable") {
		t.Errorf("missing clean room: %v", err)
	}
}

func TestEvaluateAndCheck(t *testing.T) {
	b, in := loadMini(t)
	task := taskOf(in)
	ctx := context.Background()
	ev, _ := b.Evaluate(ctx, task, t.TempDir())
	if ev.Metrics["pass_rate"] != 0 || !strings.Contains(ev.Error, "Docker runner") {
		t.Errorf("no runner: %+v", ev)
	}
	b.Opts.Runner = func(context.Context, *Instance, string) ([]byte, error) {
		return []byte(`{"test_results":[
			{"name":"tests.test_toy.test_echo","branch":"b1","status":"passed","extra":{}},
			{"name":"tests.test_toy.test_flags","branch":"b1","status":"passed","extra":{}}],
			"error_code":null,"error_details":null,"log":[]}`), nil
	}
	ev, err := b.Evaluate(ctx, task, t.TempDir())
	if err != nil || ev.Error != "" || ev.Metrics["pass_rate"] != 100 || ev.Metrics["resolved"] != 1 {
		t.Errorf("runner: %+v %v", ev, err)
	}
	ws := t.TempDir()
	res, _ := b.Check(ctx, task, ws)
	if res[0].Passed || !strings.Contains(res[0].Output, "missing") {
		t.Errorf("no compile.sh: %+v", res[0])
	}
	os.WriteFile(filepath.Join(ws, "compile.sh"), []byte("if then fi\n"), 0o755)
	res, _ = b.Check(ctx, task, ws)
	if res[0].Passed {
		t.Errorf("bad syntax passed: %+v", res[0])
	}
	os.WriteFile(filepath.Join(ws, "compile.sh"), []byte("#!/bin/sh\ncc -o executable main.c\n"), 0o755)
	res, _ = b.Check(ctx, task, ws)
	if !res[0].Passed {
		t.Errorf("good script failed: %+v", res[0])
	}
	if _, err := b.Evaluate(ctx, benchmark.Task{ID: "nope"}, ws); err == nil {
		t.Error("unknown task accepted")
	}
}

func TestEvalJSONIsKeptAndRescoredWithoutRunning(t *testing.T) {
	b, in := loadMini(t)
	task := taskOf(in)
	out := filepath.Join(t.TempDir(), "cp-1-verifier")
	runs := 0
	b.Opts.Runner = func(context.Context, *Instance, string) ([]byte, error) {
		runs++
		return []byte(`{"test_results":[
			{"name":"tests.test_toy.test_echo","branch":"b1","status":"passed","extra":{}},
			{"name":"tests.test_toy.test_flags","branch":"b1","status":"failure","extra":{}}],
			"error_code":null,"error_details":null,"log":[]}`), nil
	}
	ev, err := b.Evaluate(benchmark.WithOutputDir(context.Background(), out), task, t.TempDir())
	if err != nil || ev.Metrics["pass_rate"] != 50 {
		t.Fatalf("evaluate: %+v %v", ev, err)
	}
	kept := filepath.Join(out, evalFileName(in.ID))
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("eval.json was not kept with the checkpoint: %v", err)
	}
	again, err := b.Rescore(task, out, ev)
	if err != nil || !reflect.DeepEqual(again, ev) || runs != 1 {
		t.Fatalf("rescore of the kept eval.json: %+v %v (runner ran %d times)", again, err, runs)
	}
	// Edited on disk: the rescore follows the file.
	os.WriteFile(kept, []byte(`{"test_results":[
		{"name":"tests.test_toy.test_echo","branch":"b1","status":"passed","extra":{}},
		{"name":"tests.test_toy.test_flags","branch":"b1","status":"passed","extra":{}}],"error_code":null}`), 0o644)
	if ev2, err := b.Rescore(task, out, ev); err != nil || ev2.Metrics["pass_rate"] != 100 {
		t.Fatalf("rescore of the edited eval.json: %+v %v", ev2, err)
	}
	// Records from before eval.json was kept as a file: the copy in the details.
	os.Remove(kept)
	if ev3, err := b.Rescore(task, out, ev); err != nil || !reflect.DeepEqual(ev3, ev) {
		t.Fatalf("rescore from the recorded details: %+v %v", ev3, err)
	}
	if _, err := b.Rescore(task, out, runrecord.Evaluation{}); !errors.Is(err, benchmark.ErrNoEvaluatorOutput) {
		t.Fatalf("nothing stored: want ErrNoEvaluatorOutput, got %v", err)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	cases := []struct{ file, content, want string }{
		{"task.yaml", "repository: a/b\ncommit: c\nlanguage: go\nstars: 5\n", "task.yaml:4:"},
		{"task.yaml", "repository: [a\n", "task.yaml:"},
		{"tests.json", "{\"branches\": {\"b\": {\"tests\": [1]}}}", "tests.json:1:"},
		{"tests.json", "{\"branches\": {},\n \"extra\": 1}", `unknown field "extra"`},
		{"tests.json", "{\n\"branches\": {\n\"b\": {\"tests\": [\"x\" \"y\"]}}}", "tests.json:3:"},
	}
	for _, c := range cases {
		root := t.TempDir()
		dir := filepath.Join(root, "tasks", "x__y.1")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "task.yaml"), []byte("repository: a/b\ncommit: c\nlanguage: go\n"), 0o644)
		os.WriteFile(filepath.Join(dir, c.file), []byte(c.content), 0o644)
		_, err := Load(root)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s %q: got %v, want %q", c.file, c.content, err, c.want)
		}
	}
}

// Of the 201 instances in the real checkout, the paper's aggregates run over
// the 200 that are not upstream's toy; the leaderboard counts a missing
// instance as 0, the attempted view averages only those with a rate.
func TestPaperAggregatesExcludeTheToyBothWays(t *testing.T) {
	b, err := Load(sharedRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := b.Tasks(context.Background())
	var ids, toys []string
	for _, x := range tasks {
		ids = append(ids, x.ID)
		if isToy(x.ID) {
			toys = append(toys, x.ID)
		}
	}
	if len(ids) != 201 || len(toys) != 1 || toys[0] != "testorg__calculator.abc1234" || len(paperInstances(ids)) != 200 {
		t.Fatalf("%d instances, toys %v, paper %d", len(ids), toys, len(paperInstances(ids)))
	}
	paper := paperInstances(ids)
	rates := map[string]float64{toys[0]: 100, paper[0]: 100, paper[1]: 50}
	lb, at := PaperSummaries(ids, rates)
	if lb.Instances != 200 || lb.Scored != 2 || math.Abs(lb.AvgPassRate-0.75) > 1e-9 || lb.Resolved != 1 {
		t.Errorf("leaderboard %+v: want 150/200 = 0.75 over 200 instances, the toy's 100 ignored", lb)
	}
	if at.Instances != 2 || at.AvgPassRate != 75 || at.Resolved != 1 {
		t.Errorf("attempted %+v: want 75 over the 2 attempted", at)
	}
}
