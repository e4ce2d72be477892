package claude_test

// Integration tests: the real Claude Code CLI (scripts/install-harnesses.sh)
// against the scripted test-double provider (Anthropic Messages API).

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/claude"
	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
	"github.com/hoh-research/hoh/adapters/scripted"
)

// newClaude builds the adapter at the default pin.
var newClaude = harnesstest.At("claude", "")

// The suite runs at every pinned version (in full at the default, the newest;
// without the slow fault cases at the paper's), so a change of the CLI shows
// up here as a failing test.
func TestClaudeAgainstScriptedProvider(t *testing.T) {
	harnesstest.Pins(t, claude.CLI.Pins, func(v string) harnesstest.Target {
		return harnesstest.Target{
			New:             harnesstest.At("claude", v),
			APIs:            claude.CLI.APIs,
			StateEnv:        "CLAUDE_CONFIG_DIR",
			StatusFaultWall: 60 * time.Second,
			MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}, {Kind: scripted.FaultStatus, Status: 429}, {Kind: scripted.FaultGarbage}},
		}
	})
}
