package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// rolloutTotal reads the session's cumulative token usage from
// $CODEX_HOME/sessions/**/rollout-*-ID.jsonl (the last token_count event).
// Codex's turn.completed usage is cumulative over a resumed thread, so a
// resumed run's own usage is the total after it minus the total before it.
func rolloutTotal(stateDir, sessionID string) (runrecord.Usage, bool) {
	if sessionID == "" {
		return runrecord.Usage{}, false
	}
	var path string
	_ = filepath.WalkDir(filepath.Join(stateDir, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), "-"+sessionID+".jsonl") {
			path = p
		}
		return nil
	})
	if path == "" {
		return runrecord.Usage{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return runrecord.Usage{}, false
	}
	defer f.Close()
	var total runrecord.Usage
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"token_count"`) {
			continue
		}
		var line struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total struct {
						Input     int64 `json:"input_tokens"`
						Cached    int64 `json:"cached_input_tokens"`
						Output    int64 `json:"output_tokens"`
						Reasoning int64 `json:"reasoning_output_tokens"`
					} `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Payload.Type != "token_count" || line.Payload.Info == nil {
			continue
		}
		t := line.Payload.Info.Total
		total = runrecord.Usage{Input: t.Input, CachedInput: t.Cached, Output: t.Output, Reasoning: t.Reasoning, Total: t.Input + t.Output}
		found = true
	}
	return total, found
}

func subUsage(a, b runrecord.Usage) runrecord.Usage {
	return runrecord.Usage{Input: a.Input - b.Input, CachedInput: a.CachedInput - b.CachedInput,
		Output: a.Output - b.Output, Reasoning: a.Reasoning - b.Reasoning, Total: a.Total - b.Total}
}
