package opencode_test

// Integration tests: the real OpenCode CLI (scripts/install-harnesses.sh)
// against the scripted test-double provider, on every wire API it speaks.

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/scripted"
)

// newOpenCode builds the adapter at the default pin.
var newOpenCode = harnesstest.At("opencode", "")

// The suite runs at every pinned version (in full at the default, the newest;
// without hoh's own timeout cases at the paper's), so a change of the CLI
// shows up here as a failing test. It found that 1.14.34 (the paper's
// version) retries a persistent 500 silently until hoh's wall timeout.
func TestOpenCodeAgainstScriptedProvider(t *testing.T) {
	harnesstest.Pins(t, opencode.CLI.Pins, func(v string) harnesstest.Target {
		return harnesstest.Target{
			New:              harnesstest.At("opencode", v),
			APIs:             opencode.CLI.APIs,
			ReportsReasoning: true,
			StateEnv:         "HOME",
			// OpenCode retries 5xx five times with back-off and has no setting
			// to turn that off.
			StatusFaultWall:               150 * time.Second,
			MoreInfraFaults:               []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}},
			ServerErrorsRetriedWithoutEnd: v == "1.14.34",
		}
	})
}
