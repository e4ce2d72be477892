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

func newOpenCode(t *testing.T, p harness.Provider) harness.Harness {
	t.Helper()
	h, err := opencode.New(opencode.Config{Binary: testenv.CLI(t, "opencode"), Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestOpenCodeAgainstScriptedProvider(t *testing.T) {
	clitest.Suite(t, clitest.Target{
		New:              newOpenCode,
		APIs:             opencode.CLI.APIs,
		ReportsReasoning: true,
		StateEnv:         "HOME",
		// OpenCode retries 5xx five times with back-off and has no setting
		// to turn that off.
		StatusFaultWall: 150 * time.Second,
		MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}},
	})
}
