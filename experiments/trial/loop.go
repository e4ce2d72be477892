package trial

import (
	"context"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/runrecord"
)

// FailurePolicy is what the loop does when a role fails after its contract
// retries; every checkpoint 1..T is still produced and evaluated, so every
// task stays in every arm (paper B.2: only infrastructure failures are
// replaced, an agent's own failure is part of the result).
const FailurePolicy = `planner fails: no new D_t; the Developer and QA Tester of t get the last valid D_s (plan_from: s), or none before the first valid one (plan_from: 0);
developer fails (or times out): whatever it wrote is A_t;
QA Tester fails: E_t says qa_status "unavailable" and why, and goes to the next Planner like any evidence;
a continuation pass whose previous pass left no session starts a new session with the task and p_cont (session_note).`

type state struct {
	stages []runrecord.StageRecord
}

func loadState(l runrecord.TrialLayout) (*state, error) {
	stages, err := runrecord.ReadStages(l.Stages())
	return &state{stages: stages}, err
}

func (s *state) find(t int, role runrecord.Role) *runrecord.StageRecord {
	for i := range s.stages {
		if s.stages[i].Iteration == t && s.stages[i].Role == role {
			return &s.stages[i]
		}
	}
	return nil
}

func (s *state) invocations() []runrecord.Invocation {
	var out []runrecord.Invocation
	for _, st := range s.stages {
		out = append(out, st.Invocations...)
	}
	return out
}

type runner struct {
	l    runrecord.TrialLayout
	spec runrecord.TrialSpec
	env  Env
	cond conditions.Condition // what spec.Arm runs
	repo *history.Repo
	st   *state
	ws   string // the workspace (ProjectMode.Workspace or <dir>/workspace)
	// clock splits the run's wall time into phases (stage records and
	// the summary keep them).
	clock *phaseClock
	// secretScan remembers the workspace files it found clean, so each
	// stage's scan reads only what changed.
	secretScan *harness.SecretScan
	// committed is the digest the last stage committed the workspace at,
	// until the next stage takes it (startDigest) or restoreTo clears it.
	committed string
}

// roleEnvironment is what the benchmark says this machine lets the
// Developer and the QA Tester observe ("" when it says nothing).
func (r *runner) roleEnvironment(ctx context.Context) string {
	if re, ok := r.env.Bench.(benchmark.RoleEnvironment); ok {
		return re.RoleEnvironment(ctx, r.env.Task)
	}
	return ""
}

// slots fills the iteration context of a prompt: the iteration (never a
// total T, so a run can be extended), or in project mode the loop number and
// the budget left.
func (r *runner) slots(t int, s roles.Slots) roles.Slots {
	s.Iteration = t
	if lc := r.env.loop(); lc != nil {
		s.OpenEnded = true
		if lc.Budget != nil {
			s.Budget = lc.Budget(t)
		}
	}
	return s
}

func (r *runner) loop(ctx context.Context) error {
	c := r.cond
	for t := 1; t <= r.spec.Arm.Checkpoint; t++ {
		if c.Planning != conditions.NoPlan && r.st.find(t, runrecord.RolePlanner) == nil {
			if err := r.planStage(ctx, t); err != nil {
				return err
			}
		}
		if r.st.find(t, runrecord.RoleDeveloper) == nil {
			if err := r.developStage(ctx, t); err != nil {
				return err
			}
		}
		if c.QA && r.st.find(t, runrecord.RoleQA) == nil {
			if err := r.qaStage(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) stageDir(t int, role runrecord.Role) string { return r.l.Stage(t, role) }

func (r *runner) stage(t int, role runrecord.Role) runrecord.StageLayout {
	return r.l.StageFiles(t, role)
}

func (r *runner) rel(p string) string {
	rel, err := filepath.Rel(r.l.Dir, p)
	if err != nil {
		return p
	}
	return rel
}

func (r *runner) writeSpec(dir string) (string, error) {
	p := runrecord.StageLayout{Dir: dir}.Specification()
	return p, runrecord.WriteFile(p, []byte(r.env.Task.Spec))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// materialPaths are the files a prompt lists: what the role's view shows
// besides its working directory.
func materialPaths(mats []roles.Material) []string {
	var out []string
	for _, m := range mats {
		if m.Path != "" {
			out = append(out, m.Path)
		}
	}
	return out
}
