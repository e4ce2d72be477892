package runner

import (
	"fmt"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/plan"
)

// checkTaskTools refuses, before anything is spent, a plan in which a
// task gives its agents tools (MCP servers, skills) that a configuration's
// CLI cannot take (Pi before 0.99 has no MCP; Codex and Pi do not speak
// the legacy sse transport; a command harness takes none): the task would
// be unsolvable in that configuration's arms only, so the arms could not
// be compared. Each problem names the configuration and the task.
func checkTaskTools(p *plan.Plan) config.Problems {
	tg, ok := p.Bench.(environment.ToolGiver)
	if !ok {
		return nil
	}
	e := p.Experiment
	var ps config.Problems
	for _, t := range p.Tasks {
		tools, err := tg.AgentTools(t)
		if err != nil {
			ps = append(ps, e.Problem("benchmark", "task %s: %v", t.ID, err))
			continue
		}
		for i, c := range e.Configs {
			cli, ok := catalogue.Lookup(c.Harness)
			if !ok {
				continue // the config check reports it
			}
			if err := cli.CheckTools(c.Version, tools); err != nil {
				ps = append(ps, e.Problem(fmt.Sprintf("configs[%d].harness", i),
					"config %q cannot be given task %s's tools: %v (leave the task out with the task selection, or use another CLI)", c.Label, t.ID, err))
			}
		}
	}
	return ps
}
