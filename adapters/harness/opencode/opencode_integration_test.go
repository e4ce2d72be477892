package opencode

// Integration tests: the real OpenCode CLI (scripts/install-harnesses.sh)
// against the scripted test-double provider, on every wire API it speaks.

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/harness/command/clitest"
	"github.com/hoh-research/hoh/adapters/scripted"
)

func newOpenCode(t *testing.T, p harness.Provider) harness.Harness {
	t.Helper()
	bin, err := cliinstall.Find("opencode")
	if err != nil {
		t.Fatalf("the OpenCode CLI is required for this test (run scripts/install-harnesses.sh): %v", err)
	}
	h, err := New(Config{Binary: bin, Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestOpenCodeAgainstScriptedProvider(t *testing.T) {
	clitest.Suite(t, clitest.Target{
		New:              newOpenCode,
		APIs:             []string{"chat", "responses", "anthropic"},
		ReportsReasoning: true,
		StateEnv:         "HOME",
		// OpenCode retries 5xx five times with back-off and has no setting
		// to turn that off.
		StatusFaultWall: 150 * time.Second,
		MoreInfraFaults: []scripted.Fault{{Kind: scripted.FaultStatus, Status: 401}},
	})
}
