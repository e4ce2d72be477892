package runner

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// BreakerAttempts is how many infrastructure failures with one cause, before
// any attempt of a configuration produced a result, stop the configuration
// (the circuit breaker): the plan is not burnt on a fault every trial meets.
const BreakerAttempts = 3

// breaker watches each configuration's attempts and stops a configuration
// whose trials cannot produce a model turn: at once for a fault of the
// configuration itself (trial.StopsConfig: a CLI that cannot run or exits
// before asking the model), or when its first BreakerAttempts attempts all
// failed with the same cause. A stop is logged in stops.jsonl.
type breaker struct {
	out string
	mu  sync.Mutex
	cfg map[string]*configWatch
}

type configWatch struct {
	produced bool     // an attempt returned a result
	causes   []string // the causes of its failures before that
	last     string   // the last failure's text
	stopped  string   // why the configuration stopped ("" while it runs)
}

func newBreaker(out string) *breaker { return &breaker{out: out, cfg: map[string]*configWatch{}} }

func (b *breaker) watch(config string) *configWatch {
	w, ok := b.cfg[config]
	if !ok {
		w = &configWatch{}
		b.cfg[config] = w
	}
	return w
}

// observe records one attempt's end.
func (b *breaker) observe(config string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.watch(config)
	if w.stopped != "" {
		return
	}
	if err == nil {
		w.produced = true
		return
	}
	if !trial.IsInfra(err) {
		return
	}
	cause := trial.CauseOf(err)
	if cause == "" {
		cause = "infrastructure"
	}
	switch {
	case trial.StopsConfig(err):
		b.stop(config, w, cause, fmt.Sprintf("configuration %s stopped at its first such fault: %v", config, err))
		return
	case w.produced, cause == trial.CauseLocal:
		// A full disk is the machine's, for every configuration: the
		// replacement policy probes it and stops the run if it persists.
		return
	}
	w.causes = append(w.causes, cause)
	if len(w.causes) < BreakerAttempts {
		return
	}
	for _, c := range w.causes[:BreakerAttempts] {
		if c != w.causes[0] {
			return
		}
	}
	b.stop(config, w, cause, fmt.Sprintf("configuration %s stopped: its first %d attempts all failed the same way (%s); the last: %v",
		config, BreakerAttempts, cause, err))
}

func (b *breaker) stop(config string, w *configWatch, cause, reason string) {
	w.stopped = reason
	// Best effort: the reason is in every trial's record too.
	_ = runrecord.Append(runrecord.RunLayout{Dir: b.out}.Stops(), runrecord.ConfigStop{Config: config, Cause: cause, Reason: reason, Time: time.Now().UTC()})
}

// stopped is why config was stopped ("" when it runs).
func (b *breaker) stopped(config string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.watch(config).stopped
}

// stops lists the configurations stopped in this run, with why.
func (b *breaker) stops() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	for c, w := range b.cfg {
		if w.stopped != "" {
			out[c] = w.stopped
		}
	}
	return out
}

// notRun is the reason recorded for a trial its stopped configuration
// never started.
func notRun(why string) string {
	return "not run: " + strings.TrimPrefix(why, "not run: ")
}
