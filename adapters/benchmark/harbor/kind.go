package harbor

import (
	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/runrecord"
)

// Kind registers Harbor-format datasets (FrontierSWE, Terminal-Bench, ...):
// task images are built and verifiers run with the run's Docker client.
var Kind = kind.Kind{
	Name:        "harbor",
	NeedsPath:   true,
	NeedsDocker: true,
	Options: []kind.Option{
		{Name: "dataset", Type: kind.String, Doc: "benchmark name in records (default harbor)"},
		{Name: "gate", Type: kind.Bool, Doc: "true: score reward.json through FrontierSWE's category gate"},
		{Name: "groups", Type: kind.Path, Doc: "with gate: CSV task,group overriding the shipped FrontierSWE grouping (the paper's Table 11)"},
		{Name: "reward_key", Type: kind.String, Doc: "reward.json key of the primary metric reward (default reward); every other number is kept as a metric"},
		{Name: "workspace_path", Type: kind.String, Doc: "the agent's workspace in the task image (default: its WORKDIR, else /workspace)"},
	},
	Open:      open,
	List:      listTasks,
	Check:     checkConformance,
	Reporting: reporting(),
}

func reporting() runrecord.Reporting { r, _ := runrecord.ReportingOf("harbor"); return r }

func open(o kind.Opening) (benchmark.Benchmark, error) {
	b := &Benchmark{Dataset: "harbor", Root: o.Path, WorkspacePath: o.Options.Str("workspace_path"), RewardKey: o.Options.Str("reward_key"), Docker: o.Docker}
	if d := o.Options.Str("dataset"); d != "" {
		b.Dataset = d
	}
	if o.Options.Bool("gate") {
		b.Gate = &Gate{}
	}
	if p := o.Options.Str("groups"); p != "" {
		g, err := loadGroups(p)
		if err != nil {
			return nil, err
		}
		b.Groups = g
	}
	return b, nil
}
