package runrecord

// CheckResult is one public, deterministic runtime check of an artifact
// (a build, a smoke run). Its output may be shown to the QA Tester.
type CheckResult struct {
	Name     string `json:"name"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Passed   bool   `json:"passed"`
	Output   string `json:"output,omitempty"`
	// Unavailable is set when the check could not run at all (for example no
	// Godot binary); Output says why.
	Unavailable bool `json:"unavailable,omitempty"`
}

// Evaluation is the evaluator's verdict on a frozen artifact
// (evaluation/cp-t.json). It goes to the run records only, never back to a
// role.
type Evaluation struct {
	// Metrics maps a record-format metric name (overall, reward, pass_rate,
	// mechanics, ...) to its value on the benchmark's reporting scale.
	Metrics map[string]float64 `json:"metrics"`
	// Details is the evaluator's raw output kept whole (reward.json,
	// breakdown.json, eval.json, test logs).
	Details map[string]any `json:"details,omitempty"`
	// Error is set when evaluation itself failed; Metrics then holds the
	// benchmark's rule for that case (usually a zero score).
	Error string `json:"error,omitempty"`
}
