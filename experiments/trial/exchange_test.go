package trial

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// probe is what one invocation found in the exchange when it started.
type probe struct {
	role            runrecord.Role
	iteration       int
	workDir, state  string
	inputs          []string
	workspaceOnHost bool // the trial's workspace directory, outside the exchange
	link            string
}

type probingHarness struct {
	*fakeHarness
	x      *sandbox.Exchange
	ws     string
	probes []probe
}

func (p *probingHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	pr := probe{role: inv.Role, iteration: promptIteration(inv.Prompt), workDir: inv.WorkDir, state: inv.StateDir}
	es, _ := os.ReadDir(p.x.Inputs)
	for _, e := range es {
		pr.inputs = append(pr.inputs, e.Name())
	}
	_, err := os.Stat(p.ws)
	pr.workspaceOnHost = err == nil
	pr.link, _ = os.Readlink(p.x.Current)
	p.probes = append(p.probes, pr)
	return p.fakeHarness.Run(ctx, inv)
}

// With an exchange (a task container's only view of the trial), each
// invocation's working directory, inputs and CLI state are there and
// nowhere else: the Planner's and QA's artifacts as copies in the inputs,
// the workspace in the scratch only while the Developer works, the withheld
// E_1 absent. Run on the host, where the paths are the same.
func TestExchangeHoldsExactlyEachInvocationsInputs(t *testing.T) {
	dir := t.TempDir()
	l := runrecord.TrialLayout{Dir: dir}
	x := &sandbox.Exchange{Inputs: l.AgentViewInputs(), Scratch: l.AgentViewScratch(),
		Current: filepath.Join(l.AgentViewLink(), "current"), Idle: filepath.Join(l.AgentViewLink(), "idle")}
	x.Empty = func(context.Context) error { return sandbox.EmptyDir(x.Scratch) }
	for _, d := range []string{x.Inputs, x.Scratch, x.Idle} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := sandbox.PointLink(x.Current, x.Idle); err != nil {
		t.Fatal(err)
	}
	h := &probingHarness{fakeHarness: &fakeHarness{}, x: x, ws: l.Workspace()}
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet", Benchmark: "builtin", Task: "greet", Config: "fake", Arm: runrecord.Arm{Condition: "wo-evidence-feedback", Checkpoint: 2}, Rep: 1}
	s, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{},
		Place{Bench: b, Task: ts[0], Exchange: x},
		Route{},
		h,
		Mode{},
	))
	if err != nil || s.Status != runrecord.StatusCompleted {
		t.Fatalf("%v %+v", err, s)
	}
	if len(h.probes) != 6 {
		t.Fatalf("%d invocations", len(h.probes))
	}
	for _, p := range h.probes {
		if p.state != filepath.Join(x.Scratch, "state") {
			t.Errorf("%s: CLI state in %s", p.role, p.state)
		}
		if p.link != p.workDir {
			t.Errorf("%s: the working-directory link points at %q, not %q", p.role, p.link, p.workDir)
		}
		if slices.ContainsFunc(p.inputs, func(n string) bool { return strings.HasPrefix(n, "evidence") }) {
			t.Errorf("%s of iteration %d got evidence: %v", p.role, p.iteration, p.inputs)
		}
		var want []string
		switch p.role {
		case runrecord.RolePlanner:
			want = []string{"artifact", "specification.md"}
			if p.workDir != filepath.Join(x.Inputs, "artifact") || !p.workspaceOnHost {
				t.Errorf("planner: works in %s, workspace outside the exchange %v", p.workDir, p.workspaceOnHost)
			}
		case runrecord.RoleDeveloper:
			want = []string{"plan.json", "plan.md", "specification.md"}
			if p.workDir != filepath.Join(x.Scratch, "workspace") || p.workspaceOnHost {
				t.Errorf("developer: works in %s, workspace also outside the exchange %v", p.workDir, p.workspaceOnHost)
			}
		case runrecord.RoleQA:
			want = []string{"candidate", "plan.md", "report.json", "runtime-checks.json", "specification.md"}
			if p.workDir != filepath.Join(x.Inputs, "candidate") || !p.workspaceOnHost {
				t.Errorf("QA: works in %s, workspace outside the exchange %v", p.workDir, p.workspaceOnHost)
			}
		}
		if !slices.Equal(p.inputs, want) {
			t.Errorf("%s of iteration %d: inputs %v, want %v", p.role, p.iteration, p.inputs, want)
		}
	}
	// Afterwards: the exchange is empty, the link idle, the work kept.
	for _, d := range []string{x.Inputs, x.Scratch} {
		if es, _ := os.ReadDir(d); len(es) > 0 {
			t.Errorf("%s holds %v after the trial", d, es)
		}
	}
	if got, _ := os.Readlink(x.Current); got != x.Idle {
		t.Errorf("link %q after the trial", got)
	}
	if _, err := os.Stat(filepath.Join(l.Workspace(), "greet.sh")); err != nil {
		t.Errorf("the Developer's work is not in the workspace: %v", err)
	}
	// The assessed candidate is cp-2; its snapshot is not kept.
	if _, err := os.Stat(filepath.Join(l.Stage(2, "qa"), "candidate")); !os.IsNotExist(err) {
		t.Errorf("the candidate snapshot is kept: %v", err)
	}

	// A killed run left the workspace in the exchange: the next run puts
	// it back before it restores the last committed stage.
	if err := os.Rename(l.Workspace(), filepath.Join(x.Scratch, "workspace")); err != nil {
		t.Fatal(err)
	}
	r := &runner{env: NewEnv(Policy{}, Place{Exchange: x}, Route{}, nil, Mode{}), ws: l.Workspace()}
	if err := r.recoverWorkspace(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.Workspace(), "greet.sh")); err != nil {
		t.Errorf("the workspace was not recovered from the exchange: %v", err)
	}
}
