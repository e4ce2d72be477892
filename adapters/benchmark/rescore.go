package benchmark

import (
	"errors"

	"github.com/hoh-research/hoh/runrecord"
)

// Rescorer is implemented by benchmarks whose evaluator leaves its raw output
// in the folder WithOutputDir names (kept with the checkpoint's records):
// Rescore recomputes a checkpoint's evaluation from those files alone,
// running nothing. prev is the evaluation recorded before; a benchmark whose
// older records kept the raw output only inside it may read it there.
type Rescorer interface {
	Rescore(t Task, outputDir string, prev runrecord.Evaluation) (runrecord.Evaluation, error)
}

// ErrNoEvaluatorOutput: nothing stored to rescore from (an evaluation that
// could not run, or one recorded before outputs were kept). The recorded
// evaluation stands.
var ErrNoEvaluatorOutput = errors.New("no stored evaluator output")
