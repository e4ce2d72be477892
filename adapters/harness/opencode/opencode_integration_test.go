package opencode_test

// Integration tests: the real OpenCode CLI (scripts/install-harnesses.sh)
// against the scripted test-double provider, on every wire API it speaks.

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/command/clitest"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv"
)

// newOpenCode builds the adapter at the default pin.
func newOpenCode(t *testing.T, p harness.Provider) harness.Harness { return newOpenCodeAt("")(t, p) }

// newOpenCodeAt builds the adapter for the installed CLI at version (empty: the
// default pin).
func newOpenCodeAt(version string) func(t *testing.T, p harness.Provider) harness.Harness {
	return func(t *testing.T, p harness.Provider) harness.Harness {
		t.Helper()
		h, err := opencode.New(opencode.Config{Binary: testenv.CLIAt(t, "opencode", version), Version: version, Provider: p})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
}

// The suite runs at every pinned version (in full at the default, the newest;
// without the slow fault cases at the paper's), so a change of the CLI shows
// up here as a failing test.
func TestOpenCodeAgainstScriptedProvider(t *testing.T) {
	clitest.Pins(t, opencode.CLI.Pins, func(v string) clitest.Target {
		return clitest.Target{
			New:              newOpenCodeAt(v),
			APIs:             opencode.CLI.APIs,
			ReportsReasoning: true,
			StateEnv:         "HOME",
			// OpenCode retries 5xx five times with back-off and has no setting
			// to turn that off.
			StatusFaultWall: 150 * time.Second,
			MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}},
		}
	})
}
