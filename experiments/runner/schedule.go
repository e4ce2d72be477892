package runner

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"slices"
	"sync"

	"github.com/hoh-research/hoh/experiments/export"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner/attempt"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// execute schedules the shard's trials.
func (r *run) execute(ctx context.Context) (*Result, error) {
	trials := r.plan.Select(r.opts.Shard)
	res := &Result{Plan: r.plan}
	pending := r.resumeOutcomes(trials)
	r.startProgress(trials, len(pending))
	if err := r.writeOutputs(trials); err != nil {
		return nil, err
	}
	pending = r.schedule(ctx, trials, pending)
	r.sweepStopped(&pending, trials)
	res.Outcomes = r.outcomes.list(trials)
	res.Stopped = r.breaker.stops()
	r.progress.End()
	werr := r.writeOutputs(trials)
	if ctx.Err() != nil {
		return res, errors.Join(context.Cause(ctx), werr) // why the run stopped comes first
	}
	return res, werr
}

// resumeOutcomes books the outcomes of the trials an earlier run finished
// and returns the indexes of the others, still to run, in the order they
// start (plan.StartOrder: task by task, every arm of a task together).
func (r *run) resumeOutcomes(trials []plan.Trial) []int {
	var pending []int
	for _, i := range plan.StartOrder(trials) {
		if o, done := r.previous(trials[i]); done {
			r.outcomes.set(o)
			continue
		}
		pending = append(pending, i)
	}
	return pending
}

// startProgress starts the progress display, priced when the experiment
// has prices, with the trials an earlier run finished already counted.
func (r *run) startProgress(trials []plan.Trial, pending int) {
	r.progress = status.NewProgress(r.opts.Out, r.opts.Terminal, trials, r.exp.Concurrency, r.exp.Scripted())
	if len(r.exp.Prices) > 0 {
		r.progress.SetPrice(func(config string, u runrecord.Usage) *big.Rat {
			if p, ok := r.exp.PriceOf(config); ok {
				return p.Cost(u)
			}
			return nil
		})
	}
	earlier := 0
	for _, o := range r.outcomes.list(trials) {
		if o.Skipped {
			r.progress.Finished(o)
			earlier++
		}
	}
	if earlier > 0 {
		r.progress.Logf("%d of %d trial(s) finished in an earlier run; %d to run", earlier, len(trials), pending)
	}
}

// slots are the trials running now, overall and per configuration.
type slots struct {
	mu         sync.Mutex
	cond       *sync.Cond
	running    int
	perConfig  map[string]int
	runningSet map[string]plan.Trial
	wg         sync.WaitGroup
}

// schedule runs the pending trials, at most the experiment's concurrency
// at once and each configuration within its own limit, until all have
// started, the budget is spent or ctx is done, and waits for those it
// started; it returns the pending trials it never started.
func (r *run) schedule(ctx context.Context, trials []plan.Trial, pending []int) []int {
	s := &slots{perConfig: map[string]int{}, runningSet: map[string]plan.Trial{}}
	s.cond = sync.NewCond(&s.mu)
	stop := context.AfterFunc(ctx, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer stop()
	for len(pending) > 0 {
		s.mu.Lock()
		pick := r.waitSlot(ctx, s, trials, pending)
		if ctx.Err() != nil {
			s.mu.Unlock()
			break
		}
		if r.sweepStopped(&pending, trials) {
			s.mu.Unlock()
			continue
		}
		if r.budgetStop(&pending, trials, s.runningSet) {
			s.mu.Unlock()
			continue // the trials of tasks already started are still pending
		}
		i := pending[pick]
		pending = append(pending[:pick], pending[pick+1:]...)
		t := trials[i]
		s.running++
		s.perConfig[t.Config]++
		s.runningSet[t.Key] = t
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			r.runTrial(ctx, t)
			s.mu.Lock()
			s.running--
			s.perConfig[t.Config]--
			delete(s.runningSet, t.Key)
			s.cond.Broadcast()
			s.mu.Unlock()
		}()
	}
	s.wg.Wait()
	return pending
}

// waitSlot waits (s.mu held) until a pending trial may start and returns
// its position in pending, or -1 once ctx is done.
func (r *run) waitSlot(ctx context.Context, s *slots, trials []plan.Trial, pending []int) int {
	limit := max(r.exp.Concurrency, 1)
	for ctx.Err() == nil {
		if s.running < limit {
			for j, i := range pending {
				rt := r.configs[trials[i].Config]
				if rt.limit <= 0 || s.perConfig[trials[i].Config] < rt.limit {
					return j
				}
			}
		}
		s.cond.Wait()
	}
	return -1
}

// budgetStop, once the tokens or dollars spent (running trials included)
// reach the budget, marks stopped by the budget every pending trial of a
// task none of whose trials has started (here or in an earlier run) and
// keeps the others pending: a task that started gets every arm, so the
// records stay paired. It reports whether it took any trial off.
func (r *run) budgetStop(pending *[]int, trials []plan.Trial, runningSet map[string]plan.Trial) bool {
	reason := r.budgetReached(runningSet)
	if reason == "" {
		return false
	}
	waiting := make(map[int]bool, len(*pending))
	for _, i := range *pending {
		waiting[i] = true
	}
	started := map[plan.TaskGroup]bool{}
	for i, t := range trials {
		if !waiting[i] {
			started[t.GroupOf()] = true
		}
	}
	var keep []int
	for _, i := range *pending {
		if started[trials[i].GroupOf()] {
			keep = append(keep, i)
			continue
		}
		o := status.Outcome{Trial: trials[i], State: runrecord.StateBudget, Reason: reason}
		r.outcomes.set(o) // listed in trials.jsonl
		r.progress.Finished(o)
	}
	took := len(keep) < len(*pending)
	*pending = keep
	return took
}

// sweepStopped takes the pending trials of stopped configurations off the
// list, each a failed outcome saying why it was not run; it reports
// whether it took any.
func (r *run) sweepStopped(pending *[]int, trials []plan.Trial) bool {
	var keep []int
	took := false
	for _, i := range *pending {
		why := r.breaker.stopped(trials[i].Config)
		if why == "" {
			keep = append(keep, i)
			continue
		}
		took = true
		o := status.Outcome{Trial: trials[i], State: runrecord.StateFailed, Reason: notRun(why)}
		r.outcomes.set(o) // listed in trials.jsonl
		r.progress.Finished(o)
	}
	*pending = keep
	if took {
		if err := r.writeOutputs(trials); err != nil {
			r.progress.Logf("warning: %v", err)
		}
	}
	return took
}

// previous reports a trial an earlier run finished (or whose records are
// corrupt, which counts as failed without stopping the others).
func (r *run) previous(t plan.Trial) (status.Outcome, bool) {
	l := runrecord.TrialLayout{Dir: r.trialDir(t)}
	var s runrecord.Summary
	err := runrecord.ReadJSON(l.Summary(), &s)
	switch {
	case err == nil && s.Spec.Arm != t.Arm:
		return status.Outcome{}, false // finished for fewer steps: extend it
	case err == nil:
		o := status.OutcomeOf(t, &s)
		o.Skipped = true
		o.Replacements = attempt.CountReplacements(r.out, t.Key)
		if ledger, err := runrecord.ReadLedger(l.Usage()); err == nil {
			for _, inv := range ledger {
				o.Took += inv.Duration
			}
		}
		return o, true
	case os.IsNotExist(err):
		return status.Outcome{}, false
	default:
		return status.Outcome{Trial: t, State: runrecord.StateFailed, Reason: err.Error(), Skipped: true}, true
	}
}

// spent sums the tokens spent on finished and running trials so far: per
// trial what hoh's relay saw the provider serve it (served.jsonl: valid,
// replaced and killed attempts alike), or, where that is less (no relay, or
// a CLI reporting more), its ledger plus its replaced and killed attempts.
// A finished trial's is read once.
func (r *run) spent(running map[string]plan.Trial) int64 {
	var n int64
	r.eachSpent(running, func(_ plan.Trial, u runrecord.Usage) { n += u.Total })
	return n
}

// spentUSD prices what spent counts with each trial's configuration's
// price, exactly, and a role team without one price role by role; a
// configuration or role without a price is refused when the config is
// loaded (budget.usd needs every price).
func (r *run) spentUSD(running map[string]plan.Trial) *big.Rat {
	sum := new(big.Rat)
	r.eachSpent(running, func(t plan.Trial, u runrecord.Usage) {
		if p, ok := r.exp.PriceOf(t.Config); ok {
			sum.Add(sum, p.Cost(u))
			return
		}
		for role, u := range runrecord.SpentByRole(runrecord.TrialLayout{Dir: r.trialDir(t)}) {
			if p, ok := r.exp.PriceOfRole(t.Config, role); ok {
				sum.Add(sum, p.Cost(u))
			}
		}
	})
	return sum
}

func (r *run) eachSpent(running map[string]plan.Trial, f func(plan.Trial, runrecord.Usage)) {
	keys := map[string]plan.Trial{}
	for k, o := range r.outcomes.finished() {
		keys[k] = o.Trial
	}
	for k, t := range running {
		keys[k] = t
	}
	for k, t := range keys {
		if v, ok := r.trialSpent[k]; ok {
			f(t, v)
			continue
		}
		v := trialSpent(runrecord.TrialLayout{Dir: r.trialDir(t)})
		f(t, v)
		if _, isRunning := running[k]; !isRunning {
			r.trialSpent[k] = v
		}
	}
}

// trialSpent is what the trial in l spent so far, its steps' included.
func trialSpent(l runrecord.TrialLayout) runrecord.Usage { return runrecord.Spent(l) }

// runTrial runs one trial under the replacement policy (package attempt).
func (r *run) runTrial(ctx context.Context, t plan.Trial) status.Outcome {
	rt := r.configs[t.Config]
	dir := r.trialDir(t)
	r.progress.Started(t)
	pol := r.policyOf(t, rt)
	replace := attempt.Policy{Replacements: r.exp.Retries.Infrastructure, Backoff: r.exp.Retries.Backoff, Stop: r.stop,
		Halt: func() string { return r.breaker.stopped(t.Config) }}
	v := replace.Run(ctx, r.out, attempt.Trial{Key: t.Key, Dir: t.Dir, Path: dir},
		func(ctx context.Context) (*runrecord.Summary, error) {
			s, err := r.attempt(ctx, t, rt, pol)
			if ctx.Err() == nil {
				r.breaker.observe(t.Config, err)
			}
			return s, err
		}, r.progress.Logf)
	o := status.Outcome{Trial: t, State: runrecord.StateFailed, Reason: v.Failed, Replacements: v.Replacements}
	switch {
	case v.Summary != nil:
		o = status.OutcomeOf(t, v.Summary)
		o.Replacements = v.Replacements
	case v.Interrupted != "":
		o = status.Outcome{Trial: t, State: runrecord.StateRunning, Reason: v.Interrupted}
		r.outcomes.set(o) // not in the records: it resumes
		return o
	}
	if v.Summary != nil && slices.Contains(r.exp.Export, "atif") {
		// A multi-step trial is one document of its steps' invocations.
		r.exportATIF(dir, t.Config, rt.secrets())
	}
	r.outcomes.set(o)
	r.progress.Finished(o)
	if err := r.writeOutputs(r.plan.Select(r.opts.Shard)); err != nil {
		r.progress.Logf("warning: %v", err)
	}
	return o
}

// exportATIF writes a finished trial's ATIF trajectory.json into its
// directory (export: [atif]); a failure is a warning, not a lost trial.
func (r *run) exportATIF(dir, config string, secrets []string) {
	opt := export.Options{Secrets: secrets}
	if p, ok := r.exp.PriceOf(config); ok {
		opt.Cost = func(_ string, u runrecord.Usage) *big.Rat { return p.Cost(u) }
	}
	doc, err := export.Trial(dir, opt)
	if err == nil {
		err = export.Write(export.TrialFile(dir, "", ""), doc, secrets)
	}
	if err != nil {
		r.progress.Logf("warning: ATIF export of %s: %v", dir, err)
	}
}

// budgetReached says which budget the spending (running trials included)
// has reached, the token budget first; "" while within both.
func (r *run) budgetReached(runningSet map[string]plan.Trial) string {
	if b := r.exp.Budget.Tokens; b > 0 {
		if spent := r.spent(runningSet); spent >= b {
			return fmt.Sprintf("token budget %d reached (%d spent)", b, spent)
		}
	}
	if b := r.exp.BudgetUSD(); b != nil {
		if spent := r.spentUSD(runningSet); spent.Cmp(b) >= 0 {
			return fmt.Sprintf("dollar budget $%s reached ($%s spent)", runrecord.FormatUSD(b), runrecord.FormatUSD(spent))
		}
	}
	return ""
}
