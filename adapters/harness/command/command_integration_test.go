package command_test

// The generic command harness driving the real Pi CLI, described only by
// configs/harnesses/pi.yaml, through the shared integration suite.

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/command"
	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
)

func loadSpec(t *testing.T, name string) *command.Spec {
	t.Helper()
	spec, err := command.LoadSpec(filepath.Join(testenv.RepoRoot(t), "configs", "harnesses", name))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestCommandHarnessDescribingPi(t *testing.T) {
	spec := loadSpec(t, "pi.yaml")
	clienv.CLI(t, "pi")
	harnesstest.Suite(t, harnesstest.Target{
		New: func(t *testing.T, p harness.Provider) harness.Harness {
			h, err := command.New(spec, p)
			if err != nil {
				t.Fatal(err)
			}
			return h
		},
		APIs:            []string{"chat", "responses", "anthropic"},
		StateEnv:        "PI_CODING_AGENT_DIR",
		StatusFaultWall: 60 * time.Second,
		MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}, {Kind: scripted.FaultStatus, Status: 429}, {Kind: scripted.FaultGarbage}},
	})
}
