package pi_test

// Integration tests: the real Pi CLI (scripts/install-harnesses.sh) against
// the scripted test-double provider, on every wire API Pi speaks.

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
	"github.com/hoh-research/hoh/adapters/harness/pi"
	"github.com/hoh-research/hoh/adapters/scripted"
)

// newPi builds the adapter at the default pin.
var newPi = harnesstest.At("pi", "")

// The suite runs at every pinned version (in full at the default, the newest;
// without the slow fault cases at the paper's), so a change of the CLI shows
// up here as a failing test.
func TestPiAgainstScriptedProvider(t *testing.T) {
	harnesstest.Pins(t, pi.CLI.Pins, func(v string) harnesstest.Target {
		return harnesstest.Target{
			New:             harnesstest.At("pi", v),
			APIs:            pi.CLI.APIs,
			StateEnv:        "PI_CODING_AGENT_DIR",
			StatusFaultWall: 60 * time.Second,
			MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}, {Kind: scripted.FaultStatus, Status: 429}, {Kind: scripted.FaultGarbage}},
		}
	})
}
