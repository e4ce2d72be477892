package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/config"
	"gopkg.in/yaml.v3"
)

// experimentWith loads a config whose benchmark line is bench.
func experimentWith(t *testing.T, bench string) *config.Experiment {
	t.Helper()
	e, err := loadWith(t, bench)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// loadWith writes a config whose benchmark line is bench and loads it.
func loadWith(t *testing.T, bench string) (*config.Experiment, error) {
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
	if err != nil && !strings.Contains(err.Error(), p+":3: ") {
		t.Errorf("config errors must name the benchmark line %s:3: %v", p, err)
	}
	return e, err
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
	b, err := OpenBenchmark(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := b.(*harbor.Benchmark)
	if h.Dataset != "smoke" || h.Gate == nil || h.WorkspacePath != "/srv" || h.Docker != nil {
		t.Fatalf("%+v", h)
	}
	c := &docker.Client{}
	if b, err = OpenBenchmark(e, c); err != nil || b.(*harbor.Benchmark).Docker != c {
		t.Fatalf("open with Docker: %v %+v", err, b)
	}
}

func TestUnknownOrMistypedBenchmarkOptionsNameTheFile(t *testing.T) {
	root := abs(t, "../runner/testdata/harbor")
	for bench, want := range map[string][]string{
		`{kind: harbor, path: ` + root + `, options: {agent_image: x}}`:                                                                       {`unknown benchmark option "agent_image" for harbor`, "dataset, gate, groups, reward_key, workspace_path"},
		`{kind: harbor, path: ` + root + `, options: {gate: "yes"}}`:                                                                          {"gate: want true or false"},
		`{kind: builtin, options: {dataset: x}}`:                                                                                              {"builtin takes no options"},
		`{kind: programbench, path: ` + abs(t, "../../adapters/benchmark/programbench/testdata/calc") + `, options: {compile_timeout: soon}}`: {"compile_timeout: want a duration"},
	} {
		// config.Load refuses them at the options' line (loadWith checks
		// the file:line) ...
		_, err := loadWith(t, bench)
		if err == nil {
			t.Errorf("%s: accepted", bench)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v lacks %q", bench, err, w)
			}
		}
		// ... and so does OpenBenchmark for an experiment built in code.
		kindOnly := bench[:strings.Index(bench, ", options:")] + "}"
		e := experimentWith(t, kindOnly)
		var opts map[string]any
		if err := yaml.Unmarshal([]byte(bench), &struct {
			Options *map[string]any `yaml:"options"`
		}{&opts}); err != nil {
			t.Fatal(err)
		}
		e.Benchmark.Options = opts
		_, err = OpenBenchmark(e, nil)
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
	// Planning needs neither option; a run (Docker given) needs both.
	b, err := OpenBenchmark(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pb := b.(*programbench.Benchmark); pb.Opts.AgentImage != "" || pb.Opts.Runner != nil {
		t.Fatalf("planning gave a runner: %+v", pb.Opts)
	}
	if _, err := OpenBenchmark(e, &docker.Client{}); err == nil || !strings.Contains(err.Error(), "agent_image") {
		t.Fatalf("a missing agent_image must be named: %v", err)
	}
	e = experimentWith(t, `{kind: programbench, path: `+path+`, options: {agent_image: agent:1}}`)
	if _, err := OpenBenchmark(e, &docker.Client{}); err == nil || !strings.Contains(err.Error(), "tests_root is missing") || !strings.Contains(err.Error(), e.File) {
		t.Fatalf("a missing tests_root must be named: %v", err)
	}
	e = experimentWith(t, `{kind: programbench, path: `+path+`, options: {agent_image: agent:1, tests_root: tests, compile_timeout: 3m, eval_cpus: 2, eval_memory_mb: 512}}`)
	if _, err := OpenBenchmark(e, &docker.Client{}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("a tests_root that does not exist must be named: %v", err)
	}
	os.Mkdir(filepath.Join(filepath.Dir(e.File), "tests"), 0o755)
	if b, err = OpenBenchmark(e, &docker.Client{}); err != nil {
		t.Fatal(err)
	}
	if pb := b.(*programbench.Benchmark); pb.Opts.AgentImage != "agent:1" || pb.Opts.Runner == nil {
		t.Fatalf("options %+v", pb.Opts)
	}
}
