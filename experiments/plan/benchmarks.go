package plan

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/benchmark/programbench"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/config"
)

// BenchmarkOptions documents the keys of benchmark.options per kind.
var BenchmarkOptions = map[string]map[string]string{
	"harbor": {
		"dataset":        "benchmark name in records (default harbor)",
		"gate":           "true: score reward.json through FrontierSWE's category gate",
		"workspace_path": "the agent's workspace in the task image (default: its WORKDIR, else /workspace)",
	},
	"programbench": {
		"agent_image":     "local image the agent's task container runs (required to run trials)",
		"eval_image":      "local image with the toolchain compile.sh needs and the tests' runtime (default agent_image)",
		"tests_root":      "evaluator-only <instance>/<branch>/ test trees (relative to the config file; required to run trials)",
		"cleanroom_root":  "<instance>/ folders with the executable and docs for A_0 (default <task>/cleanroom)",
		"compile_timeout": "wall limit of ./compile.sh during evaluation, e.g. 10m",
		"test_timeout":    "wall limit of one test branch during evaluation, e.g. 10m",
		"eval_cpus":       "CPUs of each evaluation container",
		"eval_memory_mb":  "memory of each evaluation container in MB",
	},
}

// benchOptions reads e.Benchmark.Options, refusing names the kind does not
// know and values of the wrong type.
type benchOptions struct {
	e    *config.Experiment
	errs []string
}

func newBenchOptions(e *config.Experiment) *benchOptions {
	o := &benchOptions{e: e}
	known := BenchmarkOptions[e.Benchmark.Kind]
	var names []string
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	var unknown []string
	for k := range e.Benchmark.Options {
		if _, ok := known[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if len(names) == 0 {
			o.errs = append(o.errs, fmt.Sprintf("benchmark %s takes no options, got %q", e.Benchmark.Kind, k))
		} else {
			o.errs = append(o.errs, fmt.Sprintf("unknown benchmark option %q for %s (known: %s)", k, e.Benchmark.Kind, strings.Join(names, ", ")))
		}
	}
	return o
}

func (o *benchOptions) bad(key string, v any, want string) {
	o.errs = append(o.errs, fmt.Sprintf("benchmark option %s: want %s, got %v", key, want, v))
}

func (o *benchOptions) str(key string) string {
	v, ok := o.e.Benchmark.Options[key]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.bad(key, v, "a string")
	}
	return s
}

func (o *benchOptions) boolean(key string) bool {
	v, ok := o.e.Benchmark.Options[key]
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		o.bad(key, v, "true or false")
	}
	return b
}

func (o *benchOptions) number(key string) float64 {
	switch v := o.e.Benchmark.Options[key].(type) {
	case nil:
		return 0
	case int:
		return float64(v)
	case float64:
		return v
	default:
		o.bad(key, v, "a number")
		return 0
	}
}

func (o *benchOptions) duration(key string) time.Duration {
	s := o.str(key)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		o.bad(key, s, "a duration such as 10m")
	}
	return d
}

func (o *benchOptions) err() error {
	if len(o.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", o.e.File, strings.Join(o.errs, "; "))
}

// programbenchEval is the evaluator part of the ProgramBench options.
type programbenchEval struct {
	agentImage, evalImage, testsRoot string
	compile, test                    time.Duration
	cpus                             float64
	memoryMB                         int64
}

func readProgrambench(e *config.Experiment) (programbenchEval, string, error) {
	o := newBenchOptions(e)
	p := programbenchEval{
		agentImage: o.str("agent_image"), evalImage: o.str("eval_image"),
		compile: o.duration("compile_timeout"), test: o.duration("test_timeout"),
		cpus: o.number("eval_cpus"), memoryMB: int64(o.number("eval_memory_mb")),
	}
	if s := o.str("tests_root"); s != "" {
		p.testsRoot = e.Resolve(s)
	}
	if p.evalImage == "" {
		p.evalImage = p.agentImage
	}
	cleanroom := o.str("cleanroom_root")
	if cleanroom != "" {
		cleanroom = e.Resolve(cleanroom)
	}
	return p, cleanroom, o.err()
}

// AttachDocker gives a container benchmark the run's Docker client: Harbor
// builds task images and runs its verifier with it; ProgramBench gets its
// agent image and a DockerEvaluator from the config's options. Other
// benchmarks are left alone.
func AttachDocker(e *config.Experiment, b benchmark.Benchmark, c *docker.Client) error {
	switch b := b.(type) {
	case *harbor.Benchmark:
		b.Docker = c
	case *programbench.Benchmark:
		p, _, err := readProgrambench(e)
		if err != nil {
			return err
		}
		if p.agentImage == "" {
			return fmt.Errorf("%s: benchmark option agent_image is missing: ProgramBench agents run in a container from that local image", e.File)
		}
		// Without the hidden tests every checkpoint would fail evaluation
		// only after the agents had spent their tokens.
		if p.testsRoot == "" {
			return fmt.Errorf("%s: benchmark option tests_root is missing: ProgramBench evaluation runs the <instance>/<branch>/ test trees found there", e.File)
		}
		if fi, err := os.Stat(p.testsRoot); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s: benchmark option tests_root: %s is not a directory of <instance>/<branch>/ test trees", e.File, p.testsRoot)
		}
		b.Opts.AgentImage = p.agentImage
		b.Opts.Runner = programbench.DockerEvaluator{Docker: c, Image: p.evalImage, TestsRoot: p.testsRoot,
			CompileTimeout: p.compile, TestTimeout: p.test, CPUs: p.cpus, MemoryMB: p.memoryMB}.Run
	}
	return nil
}
