// Package jobs reads Harbor job directories (jobs/<job>/<trial>/result.json) as hoh records,
// so a Harbor baseline can be compared with hoh's arms.
package jobs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// A Harbor job directory (jobs/<job>/) holds the job's result.json and
// config.json and one directory per trial with the trial's result.json
// (Harbor's TrialResult: task_name, trial_name, source, config, agent_info,
// agent_result, verifier_result, exception_info, timings). ImportJobs turns
// the trials into hoh records.

// trialResult is the part of a Harbor TrialResult hoh maps.
type trialResult struct {
	TaskName  string          `json:"task_name"`
	TrialName string          `json:"trial_name"`
	Source    *string         `json:"source"`
	TaskID    json.RawMessage `json:"task_id"`
	Config    struct {
		Agent struct {
			Name      string `json:"name"`
			ModelName string `json:"model_name"`
		} `json:"agent"`
		Task struct {
			Path   string `json:"path"`
			Source string `json:"source"`
		} `json:"task"`
	} `json:"config"`
	AgentInfo *struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		ModelInfo *struct {
			Name     string `json:"name"`
			Provider string `json:"provider"`
		} `json:"model_info"`
	} `json:"agent_info"`
	AgentResult *struct {
		NInputTokens  *int64          `json:"n_input_tokens"`
		NCacheTokens  *int64          `json:"n_cache_tokens"`
		NOutputTokens *int64          `json:"n_output_tokens"`
		CostUSD       json.RawMessage `json:"cost_usd"`
	} `json:"agent_result"`
	VerifierResult *struct {
		Rewards map[string]json.RawMessage `json:"rewards"`
	} `json:"verifier_result"`
	ExceptionInfo *struct {
		Type    string `json:"exception_type"`
		Message string `json:"exception_message"`
	} `json:"exception_info"`
	StartedAt string `json:"started_at"`
}

// ImportOptions say what a Harbor result does not: each empty field is
// taken from the results.
type ImportOptions struct {
	Benchmark string // default: the trial's dataset (source)
	Config    string // default: <agent>-<model>
	Arm       runrecord.Arm
}

// Refusal is a trial whose result cannot become a record, and why.
type Refusal struct {
	Path, Reason string
}

func (r Refusal) Error() string { return r.Path + ": " + r.Reason }

// ImportJobs reads the trial results under each directory (a job
// directory, a jobs directory of several jobs, or one trial directory) and
// returns one row per trial and reward key, repetitions numbered per
// task, configuration and arm in start order, and the trials it refused.
func ImportJobs(dirs []string, opt ImportOptions) ([]runrecord.Row, []Refusal, error) {
	if opt.Arm.Condition == "" {
		opt.Arm = runrecord.Arm{Condition: runrecord.Vanilla, Checkpoint: 1}
	}
	type found struct {
		path string
		r    trialResult
	}
	var trials []found
	var refused []Refusal
	for _, d := range dirs {
		paths, err := trialResultFiles(d)
		if err != nil {
			return nil, nil, err
		}
		if len(paths) == 0 {
			return nil, nil, fmt.Errorf("%s: no Harbor trial result (<trial>/result.json with a task_name) found", d)
		}
		for _, p := range paths {
			var r trialResult
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, nil, err
			}
			if err := json.Unmarshal(data, &r); err != nil {
				refused = append(refused, Refusal{p, "not a Harbor trial result: " + err.Error()})
				continue
			}
			trials = append(trials, found{p, r})
		}
	}
	sort.SliceStable(trials, func(i, j int) bool {
		if trials[i].r.StartedAt != trials[j].r.StartedAt {
			return trials[i].r.StartedAt < trials[j].r.StartedAt
		}
		return trials[i].path < trials[j].path
	})
	reps := map[string]int{}
	var rows []runrecord.Row
	for _, t := range trials {
		rs, why := mapTrial(t.path, t.r, opt)
		if why != "" {
			refused = append(refused, Refusal{t.path, why})
			continue
		}
		k := rs[0].Benchmark + "\x00" + rs[0].Config + "\x00" + rs[0].Task
		reps[k]++
		for i := range rs {
			rs[i].Rep = reps[k]
		}
		rows = append(rows, rs...)
	}
	return rows, refused, nil
}

// trialResultFiles lists the trial result.json files under dir: files
// holding a task_name (a job's own result.json holds none).
func trialResultFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "agent" || d.Name() == "verifier" || d.Name() == "artifacts") && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "result.json" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var probe struct {
			TaskName   *string         `json:"task_name"`
			TrialName  *string         `json:"trial_name"`
			NTotal     json.RawMessage `json:"n_total_trials"`
			AgentInfo  json.RawMessage `json:"agent_info"`
			VerifierOK json.RawMessage `json:"verifier_result"`
		}
		if json.Unmarshal(data, &probe) != nil {
			out = append(out, p) // reported as not a trial result
			return nil
		}
		if probe.TaskName != nil || probe.TrialName != nil {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func mapTrial(p string, r trialResult, opt ImportOptions) ([]runrecord.Row, string) {
	task := r.TaskName
	if task == "" {
		return nil, "no task_name"
	}
	// A registry task is "<org>/<name>"; hoh names a task by its folder.
	task = path.Base(task)
	bench := opt.Benchmark
	if bench == "" {
		switch {
		case r.Source != nil && *r.Source != "":
			bench = *r.Source
		case r.Config.Task.Source != "":
			bench = r.Config.Task.Source
		default:
			return nil, "no dataset (source) in the result: name the benchmark with --benchmark"
		}
		bench, _, _ = strings.Cut(bench, "@") // terminal-bench@2.0: the version is not part of the name
	}
	config := opt.Config
	if config == "" {
		agent, model := r.Config.Agent.Name, r.Config.Agent.ModelName
		if r.AgentInfo != nil {
			if r.AgentInfo.Name != "" {
				agent = r.AgentInfo.Name
			}
			if mi := r.AgentInfo.ModelInfo; mi != nil && mi.Name != "" {
				model = mi.Name
			}
		}
		if agent == "" || model == "" {
			return nil, "no agent and model in the result: name the configuration with --config"
		}
		_, model = cutLast(model, "/") // anthropic/claude-x: the provider is not part of the model
		config = agent + "-" + model
	}
	if r.VerifierResult == nil || len(r.VerifierResult.Rewards) == 0 {
		why := "no verifier rewards"
		if e := r.ExceptionInfo; e != nil {
			why += fmt.Sprintf(" (the trial ended with %s: %s)", e.Type, firstLine(e.Message))
		}
		return nil, why + ": a trial without a score is not a record"
	}
	tokens := math.NaN()
	var cost *big.Rat
	if a := r.AgentResult; a != nil {
		if a.NInputTokens != nil && a.NOutputTokens != nil {
			tokens = float64(*a.NInputTokens + *a.NOutputTokens)
		}
		if c := strings.TrimSpace(string(a.CostUSD)); c != "" && c != "null" {
			// The literal as Harbor wrote it, exactly (not its float).
			var err error
			if cost, err = runrecord.ParseUSD(c); err != nil {
				return nil, "agent_result.cost_usd: " + err.Error()
			}
		}
	}
	keys := make([]string, 0, len(r.VerifierResult.Rewards))
	for k := range r.VerifierResult.Rewards {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rows []runrecord.Row
	for _, k := range keys {
		var v float64
		if err := json.Unmarshal(r.VerifierResult.Rewards[k], &v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Sprintf("reward %q is %s, not a number", k, r.VerifierResult.Rewards[k])
		}
		rows = append(rows, runrecord.Row{Benchmark: bench, Config: config, Condition: opt.Arm.Condition,
			Checkpoint: opt.Arm.Checkpoint, Task: task, Metric: k, Value: v, Tokens: tokens, CostUSD: cost,
			Source: p})
	}
	return rows, ""
}

func cutLast(s, sep string) (string, string) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):]
	}
	return "", s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
