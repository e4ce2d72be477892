package opencode_test

import (
	"encoding/json"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
)

func TestOpenCodeReasoningEffortReachesTheRequest(t *testing.T) {
	var req struct {
		ReasoningEffort string `json:"reasoning_effort"`
	}
	json.Unmarshal([]byte(harnesstest.Effort(t, harnesstest.Target{New: newOpenCode}, "chat", "high")), &req)
	if req.ReasoningEffort != "high" {
		t.Errorf("request reasoning_effort %q, want high", req.ReasoningEffort)
	}
}
