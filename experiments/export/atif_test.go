package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness/atif"
	"github.com/hoh-research/hoh/runrecord"
)

// The ATIF schema this test validates against is derived from Harbor's
// published Pydantic models (harbor-framework/harbor,
// src/harbor/models/trajectories/: trajectory.py, step.py, agent.py,
// tool_call.py, observation.py, observation_result.py,
// subagent_trajectory_ref.py, metrics.py, final_metrics.py; ATIF-v1.7 as
// in RFC 0001), read, not copied:
//   - every model has extra="forbid": unknown fields are errors (decoded
//     here with DisallowUnknownFields into mirror types);
//   - Trajectory: schema_version one of ATIF-v1.0..v1.8; agent required;
//     steps required, at least one, step_id sequential from 1; every
//     embedded subagent trajectory has a trajectory_id, unique among its
//     siblings; a path-less SubagentTrajectoryRef must name an embedded
//     trajectory_id; observation source_call_ids must name a tool_call_id
//     of the same step, and tool_call_ids are unique within a step;
//   - Agent: name and version required strings;
//   - Step: step_id >= 1, source in {system, user, agent}, message
//     required (a string here), timestamp ISO 8601 when set; model_name,
//     reasoning_effort, reasoning_content, tool_calls and metrics only on
//     agent steps; llm_call_count >= 0, and 0 on an agent step forbids
//     metrics and reasoning_content;
//   - ToolCall: tool_call_id, function_name and arguments (an object)
//     required;
//   - Observation: results required; ObservationResult: source_call_id,
//     content, subagent_trajectory_ref all optional;
//   - SubagentTrajectoryRef: trajectory_id or trajectory_path required;
//   - Metrics and FinalMetrics: all optional, counts integers,
//     total_steps >= 0.

type vTrajectory struct {
	SchemaVersion          *string         `json:"schema_version"`
	SessionID              *string         `json:"session_id"`
	TrajectoryID           *string         `json:"trajectory_id"`
	Agent                  *vAgent         `json:"agent"`
	Steps                  []vStep         `json:"steps"`
	Notes                  *string         `json:"notes"`
	FinalMetrics           *vFinalMetrics  `json:"final_metrics"`
	ContinuedTrajectoryRef *string         `json:"continued_trajectory_ref"`
	Extra                  map[string]any  `json:"extra"`
	SubagentTrajectories   []vTrajectory   `json:"subagent_trajectories"`
	raw                    json.RawMessage `json:"-"`
}

type vAgent struct {
	Name            *string          `json:"name"`
	Version         *string          `json:"version"`
	ModelName       *string          `json:"model_name"`
	ToolDefinitions []map[string]any `json:"tool_definitions"`
	Extra           map[string]any   `json:"extra"`
}

type vStep struct {
	StepID           *int            `json:"step_id"`
	Timestamp        *string         `json:"timestamp"`
	Source           *string         `json:"source"`
	ModelName        *string         `json:"model_name"`
	ReasoningEffort  any             `json:"reasoning_effort"`
	Message          json.RawMessage `json:"message"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCalls        []vToolCall     `json:"tool_calls"`
	Observation      *vObservation   `json:"observation"`
	Metrics          *vMetrics       `json:"metrics"`
	IsCopiedContext  *bool           `json:"is_copied_context"`
	LLMCallCount     *int            `json:"llm_call_count"`
	Extra            map[string]any  `json:"extra"`
}

type vToolCall struct {
	ToolCallID   *string         `json:"tool_call_id"`
	FunctionName *string         `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
	Extra        map[string]any  `json:"extra"`
}

type vObservation struct {
	Results *[]vResult `json:"results"`
}

type vResult struct {
	SourceCallID          *string         `json:"source_call_id"`
	Content               json.RawMessage `json:"content"`
	SubagentTrajectoryRef []vRef          `json:"subagent_trajectory_ref"`
}

type vRef struct {
	TrajectoryID   *string        `json:"trajectory_id"`
	SessionID      *string        `json:"session_id"`
	TrajectoryPath *string        `json:"trajectory_path"`
	Extra          map[string]any `json:"extra"`
}

type vMetrics struct {
	PromptTokens       *int64         `json:"prompt_tokens"`
	CompletionTokens   *int64         `json:"completion_tokens"`
	CachedTokens       *int64         `json:"cached_tokens"`
	CostUSD            *float64       `json:"cost_usd"`
	PromptTokenIDs     []int          `json:"prompt_token_ids"`
	CompletionTokenIDs []int          `json:"completion_token_ids"`
	Logprobs           []float64      `json:"logprobs"`
	Extra              map[string]any `json:"extra"`
}

type vFinalMetrics struct {
	TotalPromptTokens     *int64         `json:"total_prompt_tokens"`
	TotalCompletionTokens *int64         `json:"total_completion_tokens"`
	TotalCachedTokens     *int64         `json:"total_cached_tokens"`
	TotalCostUSD          *float64       `json:"total_cost_usd"`
	TotalSteps            *int           `json:"total_steps"`
	Extra                 map[string]any `json:"extra"`
}

// validateATIF checks a document against the derived schema and returns
// every violation.
func validateATIF(data []byte) []string {
	var t vTrajectory
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return []string{"decode: " + err.Error()}
	}
	var errs []string
	checkTrajectory(&t, "$", &errs)
	return errs
}

var schemaVersions = map[string]bool{"ATIF-v1.0": true, "ATIF-v1.1": true, "ATIF-v1.2": true, "ATIF-v1.3": true,
	"ATIF-v1.4": true, "ATIF-v1.5": true, "ATIF-v1.6": true, "ATIF-v1.7": true, "ATIF-v1.8": true}

func checkTrajectory(t *vTrajectory, at string, errs *[]string) {
	bad := func(f string, a ...any) { *errs = append(*errs, at+": "+fmt.Sprintf(f, a...)) }
	if t.SchemaVersion != nil && !schemaVersions[*t.SchemaVersion] {
		bad("schema_version %q is not an ATIF version", *t.SchemaVersion)
	}
	if t.Agent == nil {
		bad("agent is required")
	} else if t.Agent.Name == nil || t.Agent.Version == nil {
		bad("agent.name and agent.version are required")
	}
	if len(t.Steps) == 0 {
		bad("steps: at least one step is required")
	}
	if t.FinalMetrics != nil && t.FinalMetrics.TotalSteps != nil && *t.FinalMetrics.TotalSteps < 0 {
		bad("final_metrics.total_steps is negative")
	}
	embedded := map[string]bool{}
	for i := range t.SubagentTrajectories {
		sub := &t.SubagentTrajectories[i]
		sat := fmt.Sprintf("%s.subagent_trajectories[%d]", at, i)
		if sub.TrajectoryID == nil {
			*errs = append(*errs, sat+": trajectory_id is required for an embedded subagent")
		} else if embedded[*sub.TrajectoryID] {
			*errs = append(*errs, sat+": trajectory_id "+*sub.TrajectoryID+" is not unique")
		} else {
			embedded[*sub.TrajectoryID] = true
		}
		checkTrajectory(sub, sat, errs)
	}
	for i, s := range t.Steps {
		sat := fmt.Sprintf("%s.steps[%d]", at, i)
		sbad := func(f string, a ...any) { *errs = append(*errs, sat+": "+fmt.Sprintf(f, a...)) }
		if s.StepID == nil || *s.StepID != i+1 {
			sbad("step_id must be %d (sequential from 1)", i+1)
		}
		if s.Source == nil || (*s.Source != "system" && *s.Source != "user" && *s.Source != "agent") {
			sbad("source must be system, user or agent")
		}
		var msg string
		if len(s.Message) == 0 || json.Unmarshal(s.Message, &msg) != nil {
			sbad("message is required (a string)")
		}
		if s.Timestamp != nil {
			if _, err := time.Parse(time.RFC3339Nano, *s.Timestamp); err != nil {
				sbad("timestamp %q is not ISO 8601", *s.Timestamp)
			}
		}
		agent := s.Source != nil && *s.Source == "agent"
		if !agent && (s.ModelName != nil || s.ReasoningEffort != nil || s.ReasoningContent != nil || s.ToolCalls != nil || s.Metrics != nil) {
			sbad("model_name, reasoning_effort, reasoning_content, tool_calls and metrics are for agent steps only")
		}
		if s.LLMCallCount != nil {
			if *s.LLMCallCount < 0 {
				sbad("llm_call_count is negative")
			}
			if *s.LLMCallCount == 0 && agent && (s.Metrics != nil || s.ReasoningContent != nil) {
				sbad("llm_call_count 0 forbids metrics and reasoning_content")
			}
		}
		ids := map[string]bool{}
		for j, c := range s.ToolCalls {
			if c.ToolCallID == nil || c.FunctionName == nil {
				sbad("tool_calls[%d]: tool_call_id and function_name are required", j)
				continue
			}
			var args map[string]any
			if json.Unmarshal(c.Arguments, &args) != nil || args == nil {
				sbad("tool_calls[%d]: arguments must be an object", j)
			}
			if ids[*c.ToolCallID] {
				sbad("duplicate tool_call_id %q", *c.ToolCallID)
			}
			ids[*c.ToolCallID] = true
		}
		if s.Observation != nil {
			if s.Observation.Results == nil {
				sbad("observation.results is required")
				continue
			}
			for _, r := range *s.Observation.Results {
				if r.SourceCallID != nil && !ids[*r.SourceCallID] {
					sbad("observation source_call_id %q names no tool call of the step", *r.SourceCallID)
				}
				for _, ref := range r.SubagentTrajectoryRef {
					id, path := "", ""
					if ref.TrajectoryID != nil {
						id = *ref.TrajectoryID
					}
					if ref.TrajectoryPath != nil {
						path = *ref.TrajectoryPath
					}
					if strings.TrimSpace(id) == "" && strings.TrimSpace(path) == "" {
						sbad("subagent_trajectory_ref needs trajectory_id or trajectory_path")
					}
					if path == "" && !embedded[id] {
						sbad("subagent_trajectory_ref %q is not an embedded trajectory", id)
					}
				}
			}
		}
	}
}

const fixture = "testdata/four-harnesses"

func sumSteps(steps []atif.Step) (runrecord.Usage, bool) {
	var u runrecord.Usage
	any := false
	for _, s := range steps {
		if m := s.Metrics; m != nil {
			any = true
			u.Input += *m.PromptTokens
			u.Output += *m.CompletionTokens
			u.CachedInput += *m.CachedTokens
			if r, ok := m.Extra["reasoning_tokens"].(int64); ok {
				u.Reasoning += r
			}
		}
	}
	u.Total = u.Input + u.Output
	return u, any
}

// Every trial of the four CLIs' recorded scripted runs (HoH@2 and Vanilla
// passes through the real Codex, Claude Code, OpenCode and Pi against the
// scripted test-double provider) exports to a schema-valid document whose
// token totals are the ledger's, with tool calls and observations taken
// from each CLI's own stream.
func TestExportFourHarnessesValidAndLedgerTotals(t *testing.T) {
	dirs, err := TrialDirs(fixture)
	if err != nil || len(dirs) != 8 {
		t.Fatalf("TrialDirs: %v %v", dirs, err)
	}
	kinds := map[string]bool{}
	for _, d := range dirs {
		doc, err := Trial(d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(doc)
		for _, e := range validateATIF(data) {
			t.Errorf("%s: %s", d, e)
		}
		ledger, err := runrecord.ReadLedger(runrecord.TrialLayout{Dir: d}.Usage())
		if err != nil || len(ledger) == 0 {
			t.Fatalf("%s: ledger %v %v", d, ledger, err)
		}
		var total runrecord.Usage
		for _, l := range ledger {
			total = total.Add(l.Usage)
		}
		if got := atif.FinalUsage(doc.FinalMetrics); got != total {
			t.Errorf("%s: final metrics %+v, ledger %+v", d, got, total)
		}
		if len(doc.SubagentTrajectories) != len(ledger) || len(doc.Steps) != len(ledger)+1 {
			t.Fatalf("%s: %d subagents, %d steps for %d invocations", d, len(doc.SubagentTrajectories), len(doc.Steps), len(ledger))
		}
		for i, sub := range doc.SubagentTrajectories {
			inv := ledger[i]
			kinds[sub.Agent.Name] = true
			if got := atif.FinalUsage(sub.FinalMetrics); got != inv.Usage {
				t.Errorf("%s %s: final metrics %+v, ledger %+v", d, inv.Dir, got, inv.Usage)
			}
			// The per-step metrics add up to the invocation's tokens.
			steps, ok := sumSteps(sub.Steps)
			steps.Reasoning = inv.Usage.Reasoning // not every CLI reports it per step
			if !ok || steps != inv.Usage {
				t.Errorf("%s %s (%s): step metrics sum to %+v, ledger %+v", d, inv.Dir, sub.Agent.Name, steps, inv.Usage)
			}
			if sub.Extra["role"] != inv.Role || sub.Extra["iteration"] != inv.Iteration || doc.Steps[i+1].Extra["role"] != inv.Role {
				t.Errorf("%s %s: role/iteration not in extra: %v", d, inv.Dir, sub.Extra)
			}
			if sub.Steps[0].Source != "user" || sub.Steps[0].Message == "" {
				t.Errorf("%s %s: first step is not the prompt", d, inv.Dir)
			}
			if inv.Role == "developer" {
				calls, observed := 0, 0
				for _, s := range sub.Steps {
					calls += len(s.ToolCalls)
					if s.Observation != nil {
						for _, r := range s.Observation.Results {
							if r.SourceCallID != "" && r.Content != nil {
								observed++
							}
						}
					}
					for _, c := range s.ToolCalls {
						if len(c.Arguments) == 0 {
							t.Errorf("%s %s: tool call %s without arguments", d, inv.Dir, c.FunctionName)
						}
					}
				}
				if calls < 2 || observed != calls {
					t.Errorf("%s %s (%s): %d tool calls, %d observations", d, inv.Dir, sub.Agent.Name, calls, observed)
				}
				if !hasObservation(sub.Steps, "Hello, Ada!") {
					t.Errorf("%s %s (%s): the command's output is not an observation", d, inv.Dir, sub.Agent.Name)
				}
			}
		}
	}
	for _, k := range []string{"codex", "claude", "opencode", "pi"} {
		if !kinds[k] {
			t.Errorf("no %s trajectory among %v", k, kinds)
		}
	}
}

func hasObservation(steps []atif.Step, text string) bool {
	for _, s := range steps {
		if s.Observation == nil {
			continue
		}
		for _, r := range s.Observation.Results {
			if r.Content != nil && strings.Contains(*r.Content, text) {
				return true
			}
		}
	}
	return false
}

// The written documents read back into the same trajectories, with no
// field unknown to the model; secrets never reach them.
func TestExportRoundTripAndSecrets(t *testing.T) {
	out := t.TempDir()
	secret := "Role: Developer" // stands in for a key value: it is in every Developer prompt
	written, err := Tree(fixture, out, Options{Secrets: []string{secret}})
	if err != nil || len(written) != 8 {
		t.Fatalf("Tree: %v %v", written, err)
	}
	for _, p := range written {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the secret", p)
		}
		for _, e := range validateATIF(data) {
			t.Errorf("%s: %s", p, e)
		}
		var back atif.Trajectory
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rel, _ := filepath.Rel(out, filepath.Dir(p))
		doc, err := Trial(filepath.Join(fixture, rel), Options{Secrets: []string{secret}})
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.MarshalIndent(back, "", "  ")
		want, _ := json.MarshalIndent(doc, "", "  ")
		want = bytes.ReplaceAll(want, []byte(secret), []byte("[REDACTED]"))
		if !bytes.Equal(again, want) {
			t.Errorf("%s does not read back as written", p)
		}
		if atif.FinalUsage(back.FinalMetrics) != atif.FinalUsage(doc.FinalMetrics) {
			t.Errorf("%s: totals changed on the way back", p)
		}
	}
}

// The validator is not a rubber stamp: each rule it derives rejects a
// document that breaks it.
func TestValidatorRejects(t *testing.T) {
	doc, err := Trial(filepath.Join(fixture, "pi-scripted/hoh/greet/rep-1"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(d *atif.Trajectory) ([]byte, string){
		"step ids": func(d *atif.Trajectory) ([]byte, string) {
			d.Steps[1].StepID = 7
			return mustJSON(d), "sequential"
		},
		"dangling call": func(d *atif.Trajectory) ([]byte, string) {
			s := &d.SubagentTrajectories[1].Steps[1]
			s.Observation.Results[0].SourceCallID = "nope"
			return mustJSON(d), "names no tool call"
		},
		"dangling subagent": func(d *atif.Trajectory) ([]byte, string) {
			d.Steps[1].Observation.Results[0].SubagentTrajectoryRef[0].TrajectoryID = "gone"
			return mustJSON(d), "not an embedded trajectory"
		},
		"metrics on a dispatch": func(d *atif.Trajectory) ([]byte, string) {
			d.Steps[1].Metrics = atif.UsageMetrics(runrecord.Usage{Input: 1})
			return mustJSON(d), "llm_call_count 0"
		},
		"unknown field": func(d *atif.Trajectory) ([]byte, string) {
			return bytes.Replace(mustJSON(d), []byte(`"notes"`), []byte(`"note"`), 1), "unknown field"
		},
		"no steps": func(d *atif.Trajectory) ([]byte, string) {
			d.SubagentTrajectories[0].Steps = nil
			return mustJSON(d), "at least one step"
		},
		"user step with tool calls": func(d *atif.Trajectory) ([]byte, string) {
			d.Steps[0].ToolCalls = []atif.ToolCall{{ToolCallID: "x", FunctionName: "f", Arguments: map[string]any{}}}
			return mustJSON(d), "agent steps only"
		},
	}
	for name, mutate := range cases {
		var d atif.Trajectory
		_ = json.Unmarshal(mustJSON(&doc), &d)
		data, want := mutate(&d)
		errs := validateATIF(data)
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("%s: errors %v, want one saying %q", name, errs, want)
		}
	}
	if errs := validateATIF(mustJSON(&doc)); len(errs) > 0 {
		t.Errorf("the unmodified document: %v", errs)
	}
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// With a price table each invocation and the trial carry their dollars:
// tokens x prices exactly; a model without a price has no cost at all.
func TestExportCosts(t *testing.T) {
	in, _ := new(big.Rat).SetString("1.25")
	cached, _ := new(big.Rat).SetString("0.125")
	out := big.NewRat(10, 1)
	p := runrecord.Price{Input: in, CachedInput: cached, Output: out}
	d := filepath.Join(fixture, "claude-scripted/hoh/greet/rep-1")
	doc, err := Trial(d, PriceByConfig(runrecord.Prices{"scripted/scripted-model": p}))
	if err != nil {
		t.Fatal(err)
	}
	ledger, _ := runrecord.ReadLedger(runrecord.TrialLayout{Dir: d}.Usage())
	total := new(big.Rat)
	for i, sub := range doc.SubagentTrajectories {
		want := p.Cost(ledger[i].Usage)
		total.Add(total, want)
		if sub.FinalMetrics.Extra["total_cost_usd_exact"] != runrecord.FormatUSD(want) || sub.FinalMetrics.TotalCostUSD == nil {
			t.Errorf("%s: cost %v, want %s", sub.TrajectoryID, sub.FinalMetrics.Extra["total_cost_usd_exact"], runrecord.FormatUSD(want))
		}
	}
	if doc.FinalMetrics.Extra["total_cost_usd_exact"] != runrecord.FormatUSD(total) {
		t.Errorf("trial cost %v, want %s", doc.FinalMetrics.Extra["total_cost_usd_exact"], runrecord.FormatUSD(total))
	}
	if errs := validateATIF(mustJSON(&doc)); len(errs) > 0 {
		t.Error(errs)
	}
	doc, _ = Trial(d, PriceByConfig(runrecord.Prices{"other-model": p}))
	if doc.FinalMetrics.TotalCostUSD != nil || doc.SubagentTrajectories[0].FinalMetrics.TotalCostUSD != nil {
		t.Error("an unpriced model got a cost")
	}
}

// A multi-step trial is one document: its steps' invocations in step order,
// each trajectory named by its step, its totals the sum of its steps'
// ledgers; the steps' own trial directories get no document of their own.
func TestExportMultiStepTrial(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(run, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	trial := filepath.Join(run, "codex-scripted", "hoh", "greet", "rep-1")
	single, err := runrecord.ReadLedger(runrecord.TrialLayout{Dir: trial}.Usage())
	if err != nil || len(single) == 0 {
		t.Fatalf("fixture ledger %v %v", single, err)
	}
	// Each step is a trial of its own: the fixture's records, twice.
	for _, step := range []string{"01-build", "02-extend"} {
		if err := os.CopyFS(filepath.Join(trial, runrecord.StepsDir, step), os.DirFS(filepath.Join(fixture, "codex-scripted", "hoh", "greet", "rep-1"))); err != nil {
			t.Fatal(err)
		}
	}
	// As the runner leaves it: steps.json and summary.json, no trial.json
	// and no ledger of its own.
	spec, err := runrecord.ReadTrialSpec(runrecord.TrialLayout{Dir: trial}.Spec())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"iter-01", "iter-02", runrecord.UsageFile, runrecord.TrialSpecFile} {
		if err := os.RemoveAll(filepath.Join(trial, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := runrecord.WriteJSON(filepath.Join(trial, runrecord.StepsFile), []runrecord.StepRecord{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Trial(trial, Options{}); err == nil || !strings.Contains(err.Error(), "no summary yet") {
		t.Errorf("a multi-step trial without its summary: %v", err)
	}
	if err := runrecord.WriteJSON(runrecord.TrialLayout{Dir: trial}.Summary(), runrecord.Summary{Spec: spec, Status: runrecord.StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	written, err := Tree(run, "", Options{})
	if err != nil || len(written) != 8 {
		t.Fatalf("Tree wrote %v, %v: want one document per trial, none per step", written, err)
	}
	doc, err := Trial(trial, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(doc)
	for _, e := range validateATIF(data) {
		t.Error(e)
	}
	var want runrecord.Usage
	for _, l := range single {
		want = want.Add(l.Usage).Add(l.Usage)
	}
	if got := atif.FinalUsage(doc.FinalMetrics); got != want {
		t.Errorf("final metrics %+v, the steps' ledgers %+v", got, want)
	}
	if len(doc.SubagentTrajectories) != 2*len(single) || len(doc.Steps) != 2*len(single)+1 {
		t.Fatalf("%d subagents, %d steps for 2x%d invocations", len(doc.SubagentTrajectories), len(doc.Steps), len(single))
	}
	ids := map[string]bool{}
	for i, sub := range doc.SubagentTrajectories {
		step := filepath.Join(runrecord.StepsDir, "01-build")
		if i >= len(single) {
			step = filepath.Join(runrecord.StepsDir, "02-extend")
		}
		if want := filepath.Join(step, single[i%len(single)].Dir); sub.TrajectoryID != want || ids[sub.TrajectoryID] {
			t.Errorf("subagent %d: id %q, want %q (unique)", i, sub.TrajectoryID, want)
		}
		ids[sub.TrajectoryID] = true
		if d := doc.Steps[i+1]; d.Extra["step"] != step || !strings.HasPrefix(d.Message, step+": ") {
			t.Errorf("dispatch %d does not name its step %s: %q %v", i+1, step, d.Message, d.Extra)
		}
	}
}
