package runner

import (
	"sync"

	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// outcomeBook is the run's one record of its trials' outcomes, by key: the
// run's result, its records (trials.jsonl, scores.csv) and its budget all
// read it. A trial with no entry is still to run.
type outcomeBook struct {
	mu    sync.Mutex
	byKey map[string]status.Outcome
}

func newOutcomeBook() *outcomeBook { return &outcomeBook{byKey: map[string]status.Outcome{}} }

func (b *outcomeBook) set(o status.Outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.byKey[o.Trial.Key] = o
}

// list is each trial's outcome, in the order of trials.
func (b *outcomeBook) list(trials []plan.Trial) []status.Outcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]status.Outcome, len(trials))
	for i, t := range trials {
		o, ok := b.byKey[t.Key]
		if !ok {
			o = status.Outcome{Trial: t, State: runrecord.StateRemaining}
		}
		out[i] = o
	}
	return out
}

// finished are the outcomes the records list: every trial that ended, or
// that a stop or the budget took off before it started; not one a stop
// interrupted (it resumes).
func (b *outcomeBook) finished() map[string]status.Outcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]status.Outcome, len(b.byKey))
	for k, o := range b.byKey {
		if o.State != runrecord.StateRunning && o.State != runrecord.StateRemaining {
			out[k] = o
		}
	}
	return out
}
