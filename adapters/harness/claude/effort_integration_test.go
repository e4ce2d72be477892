package claude_test

import (
	"encoding/json"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/harnesstest"
)

func TestClaudeReasoningEffortReachesTheRequest(t *testing.T) {
	var req struct {
		OutputConfig struct {
			Effort string `json:"effort"`
		} `json:"output_config"`
	}
	json.Unmarshal([]byte(harnesstest.Effort(t, harnesstest.Target{New: newClaude}, "anthropic", "high")), &req)
	if req.OutputConfig.Effort != "high" {
		t.Errorf("request output_config.effort %q, want high", req.OutputConfig.Effort)
	}
}
