package pi_test

// Integration tests: the real Pi CLI (scripts/install-harnesses.sh) against
// the scripted test-double provider, on every wire API Pi speaks.

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/command/clitest"
	"github.com/hoh-research/hoh/adapters/harness/pi"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv"
)

func newPi(t *testing.T, p harness.Provider) harness.Harness {
	t.Helper()
	h, err := pi.New(pi.Config{Binary: testenv.CLI(t, "pi"), Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPiAgainstScriptedProvider(t *testing.T) {
	clitest.Suite(t, clitest.Target{
		New:             newPi,
		APIs:            pi.CLI.APIs,
		StateEnv:        "PI_CODING_AGENT_DIR",
		StatusFaultWall: 60 * time.Second,
		MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}, {Kind: scripted.FaultStatus, Status: 429}, {Kind: scripted.FaultGarbage}},
	})
}
