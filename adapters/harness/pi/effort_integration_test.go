package pi_test

import (
	"encoding/json"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
)

// Pi's --thinking maps onto the wire API's own reasoning field.
func TestPiReasoningEffortReachesTheRequest(t *testing.T) {
	var chat struct {
		ReasoningEffort string `json:"reasoning_effort"`
	}
	json.Unmarshal([]byte(harnesstest.Effort(t, harnesstest.Target{New: newPi}, "chat", "high")), &chat)
	if chat.ReasoningEffort != "high" {
		t.Errorf("chat request reasoning_effort %q, want high", chat.ReasoningEffort)
	}
	var anth struct {
		Thinking struct {
			Type string `json:"type"`
		} `json:"thinking"`
	}
	json.Unmarshal([]byte(harnesstest.Effort(t, harnesstest.Target{New: newPi}, "anthropic", "high")), &anth)
	if anth.Thinking.Type != "enabled" {
		t.Errorf("anthropic request thinking %+v, want enabled", anth.Thinking)
	}
}
