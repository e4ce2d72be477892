package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/config"
)

// experimentWith loads a config whose benchmark line is bench.
func experimentWith(t *testing.T, bench string) *config.Experiment {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("entries:\n  - name: a\n    match: .\n    steps:\n      - say: ok\n"), 0o644)
	p := filepath.Join(dir, "e.yaml")
	os.WriteFile(p, []byte(`name: p
output: out
benchmark: `+bench+`
configs:
  - label: c
    harness: codex
    provider: {name: scripted, api: responses, key_env: K, model: m}
    scripted: {script: s.yaml}
conditions: [vanilla]
`), 0o644)
	e, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHarborOptions(t *testing.T) {
	root := abs(t, "../runner/testdata/harbor")
	e := experimentWith(t, `{kind: harbor, path: `+root+`, options: {dataset: smoke, gate: true, workspace_path: /srv}}`)
	b, err := OpenBenchmark(e)
	if err != nil {
		t.Fatal(err)
	}
	h := b.(*harbor.Benchmark)
	if h.Dataset != "smoke" || h.Gate == nil || h.WorkspacePath != "/srv" || h.Docker != nil {
		t.Fatalf("%+v", h)
	}
	c := &docker.Client{}
	if err := AttachDocker(e, b, c); err != nil || h.Docker != c {
		t.Fatalf("attach: %v %p", err, h.Docker)
	}
}

func TestUnknownOrMistypedBenchmarkOptionsNameTheFile(t *testing.T) {
	root := abs(t, "../runner/testdata/harbor")
	for bench, want := range map[string][]string{
		`{kind: harbor, path: ` + root + `, options: {agent_image: x}}`:                                                                       {`unknown benchmark option "agent_image" for harbor`, "dataset, gate, workspace_path"},
		`{kind: harbor, path: ` + root + `, options: {gate: "yes"}}`:                                                                          {"gate: want true or false"},
		`{kind: builtin, options: {dataset: x}}`:                                                                                              {"builtin takes no options"},
		`{kind: programbench, path: ` + abs(t, "../../adapters/benchmark/programbench/testdata/calc") + `, options: {compile_timeout: soon}}`: {"compile_timeout: want a duration"},
	} {
		e := experimentWith(t, bench)
		_, err := OpenBenchmark(e)
		if err == nil || !strings.Contains(err.Error(), e.File) {
			t.Errorf("%s: %v", bench, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v lacks %q", bench, err, w)
			}
		}
	}
}

func TestProgramBenchOptionsGiveAgentImageAndDockerEvaluator(t *testing.T) {
	path := abs(t, "../../adapters/benchmark/programbench/testdata/calc")
	e := experimentWith(t, `{kind: programbench, path: `+path+`}`)
	b, err := OpenBenchmark(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := AttachDocker(e, b, &docker.Client{}); err == nil || !strings.Contains(err.Error(), "agent_image") {
		t.Fatalf("a missing agent_image must be named: %v", err)
	}
	e = experimentWith(t, `{kind: programbench, path: `+path+`, options: {agent_image: agent:1}}`)
	if b, err = OpenBenchmark(e); err != nil {
		t.Fatal(err)
	}
	if err := AttachDocker(e, b, &docker.Client{}); err == nil || !strings.Contains(err.Error(), "tests_root is missing") || !strings.Contains(err.Error(), e.File) {
		t.Fatalf("a missing tests_root must be named: %v", err)
	}
	e = experimentWith(t, `{kind: programbench, path: `+path+`, options: {agent_image: agent:1, tests_root: tests, compile_timeout: 3m, eval_cpus: 2, eval_memory_mb: 512}}`)
	if b, err = OpenBenchmark(e); err != nil {
		t.Fatal(err)
	}
	pb := b.(*programbench.Benchmark)
	if err := AttachDocker(e, b, &docker.Client{}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("a tests_root that does not exist must be named: %v", err)
	}
	os.Mkdir(filepath.Join(filepath.Dir(e.File), "tests"), 0o755)
	if err := AttachDocker(e, b, &docker.Client{}); err != nil {
		t.Fatal(err)
	}
	if pb.Opts.AgentImage != "agent:1" || pb.Opts.Runner == nil {
		t.Fatalf("options %+v", pb.Opts)
	}
	p, _, err := readProgrambench(e)
	if err != nil || p.evalImage != "agent:1" || p.testsRoot != filepath.Join(filepath.Dir(e.File), "tests") ||
		p.compile != 3*time.Minute || p.cpus != 2 || p.memoryMB != 512 {
		t.Fatalf("evaluator settings %+v %v", p, err)
	}
}
