package claude_test

// Integration tests: the real Claude Code CLI (scripts/install-harnesses.sh)
// against the scripted test-double provider (Anthropic Messages API).

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/claude"
	"github.com/hoh-research/hoh/adapters/harness/command/clitest"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv"
)

func newClaude(t *testing.T, p harness.Provider) harness.Harness {
	t.Helper()
	h, err := claude.New(claude.Config{Binary: testenv.CLI(t, "claude"), Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestClaudeAgainstScriptedProvider(t *testing.T) {
	clitest.Suite(t, clitest.Target{
		New:             newClaude,
		APIs:            claude.CLI.APIs,
		StateEnv:        "CLAUDE_CONFIG_DIR",
		StatusFaultWall: 60 * time.Second,
		MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}, {Kind: scripted.FaultStatus, Status: 429}, {Kind: scripted.FaultGarbage}},
	})
}
