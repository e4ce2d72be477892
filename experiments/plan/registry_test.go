package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/adapters/benchmark/registry"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/runrecord"
)

// folderBench is a test-only benchmark: one task per *.task file of Root.
type folderBench struct {
	root  string
	level float64
}

func (b folderBench) Name() string { return "folders" }

func (b folderBench) Tasks(context.Context) ([]benchmark.Task, error) { return folderTasks(b.root) }

func (b folderBench) InitialWorkspace(context.Context, benchmark.Task, string) error { return nil }

func (b folderBench) Check(context.Context, benchmark.Task, string) ([]runrecord.CheckResult, error) {
	return nil, nil
}

func (b folderBench) Evaluate(context.Context, benchmark.Task, string) (runrecord.Evaluation, error) {
	return runrecord.Evaluation{Metrics: map[string]float64{"level": b.level}}, nil
}

func folderTasks(root string) ([]benchmark.Task, error) {
	files, err := filepath.Glob(filepath.Join(root, "*.task"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.task files", root)
	}
	sort.Strings(files)
	var out []benchmark.Task
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".task")
		out = append(out, benchmark.Task{Benchmark: "folders", ID: id, Spec: "do " + id})
	}
	return out, nil
}

// A kind registered only through the registry (no other file knows it) is
// validated by config.Load at the line of its options, opened by plan with
// its options, planned, and listed and checked by `hoh tasks`' functions.
func TestRegisteredKindFlowsThroughConfigPlanAndConformance(t *testing.T) {
	var opened []kind.Opening
	unregister, err := registry.Register(kind.Kind{
		Name:      "folders",
		NeedsPath: true,
		Options:   []kind.Option{{Name: "level", Type: kind.Number, Doc: "what Evaluate reports"}},
		Open: func(o kind.Opening) (benchmark.Benchmark, error) {
			opened = append(opened, o)
			return folderBench{root: o.Path, level: o.Options.Number("level")}, nil
		},
		List: folderTasks,
		Check: func(r *conformance.Report) {
			tasks, err := folderTasks(r.Root)
			if err != nil {
				r.Problems = append(r.Problems, conformance.ProblemOf(err))
			}
			r.Tasks = tasks
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()
	if _, err := registry.Register(kind.Kind{Name: "folders", Open: func(kind.Opening) (benchmark.Benchmark, error) { return nil, nil }}); err == nil {
		t.Error("a second kind of the same name was accepted")
	}

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks")
	os.Mkdir(tasks, 0o755)
	for _, id := range []string{"b", "a"} {
		os.WriteFile(filepath.Join(tasks, id+".task"), nil, 0o644)
	}

	// Config validation: the path, the option names and their types.
	for bench, want := range map[string]string{
		`{kind: folders}`: "benchmark folders needs a path",
		`{kind: folders, path: ` + tasks + `, options: {depth: 2}}`:    `unknown benchmark option "depth" for folders (known: level)`,
		`{kind: folders, path: ` + tasks + `, options: {level: high}}`: "benchmark option level: want a number, got high",
	} {
		if _, err := loadWith(t, bench); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bench, err, want)
		}
	}

	// Plan: opened once with its options, without Docker (not a container
	// kind), every task planned.
	e := experimentWith(t, `{kind: folders, path: `+tasks+`, options: {level: 7}}`)
	p, err := Build(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 1 || opened[0].Path != tasks || opened[0].Options.Number("level") != 7 || opened[0].Docker != nil {
		t.Fatalf("opened %+v", opened)
	}
	if len(p.Trials) != 2 || p.Trials[0].Task.ID != "a" || p.Trials[1].Task.ID != "b" || p.Bench.Name() != "folders" {
		t.Fatalf("plan %+v", p.Trials)
	}
	// A run's Docker client goes only to kinds that declare NeedsDocker.
	if _, err := OpenBenchmark(e, &docker.Client{}); err != nil || len(opened) != 2 || opened[1].Docker != nil {
		t.Fatalf("open with a client: %v %+v", err, opened)
	}

	// Conformance: hoh tasks list|check reach the kind.
	if !contains(registry.Checkable(), "folders") {
		t.Errorf("checkable kinds %v lack folders", registry.Checkable())
	}
	if ts, err := registry.List("folders", tasks); err != nil || len(ts) != 2 {
		t.Errorf("list: %v %v", ts, err)
	}
	if r, err := registry.CheckHost("folders", tasks, conformance.Host{}); err != nil || !r.OK() || len(r.Tasks) != 2 {
		t.Errorf("check: %+v %v", r, err)
	}
	if r, err := registry.CheckHost("folders", dir, conformance.Host{}); err != nil || r.OK() {
		t.Errorf("check of a folder without tasks must fail: %+v %v", r, err)
	}

	// Unregistered, the kind is unknown again, and the message lists the
	// kinds that are.
	unregister()
	if _, err := loadWith(t, `{kind: folders, path: `+tasks+`}`); err == nil ||
		!strings.Contains(err.Error(), `unknown benchmark kind "folders" (known: builtin, gamecraft, programbench, harbor)`) {
		t.Errorf("after unregister: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A kind's NeedsDocker flag is what makes a run connect to Docker before
// Open; a kind whose benchmark runs agents in task containers must set it. Its Reporting is its entry of the table the analysis reads.
func TestRegisteredKindsAgreeWithTheirBenchmarks(t *testing.T) {
	paths := map[string]string{
		"builtin":      "",
		"gamecraft":    abs(t, "../../adapters/benchmark/gamecraft/testdata/mini"),
		"harbor":       abs(t, "../runner/testdata/harbor"),
		"programbench": abs(t, "../../adapters/benchmark/programbench/testdata/calc"),
	}
	for _, k := range registry.Kinds() {
		path, ok := paths[k.Name]
		if !ok {
			t.Errorf("kind %s has no fixture in this test", k.Name)
			continue
		}
		e := experimentWith(t, `{kind: `+k.Name+`, path: "`+path+`"}`)
		b, err := OpenBenchmark(e, nil)
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		if _, isContainer := b.(environment.ContainerBenchmark); isContainer && !k.NeedsDocker {
			t.Errorf("%s: its benchmark runs agents in task containers, but the kind does not set NeedsDocker", k.Name)
		}
		if r, ok := runrecord.ReportingOf(k.Name); !ok || r != k.Reporting || r.PrimaryMetric == "" {
			t.Errorf("%s: reporting %+v, table %+v", k.Name, k.Reporting, r)
		}
		if k.NeedsPath != (path != "") {
			t.Errorf("%s: NeedsPath %v", k.Name, k.NeedsPath)
		}
	}
}
