// Package attempt is the runner's replacement policy (paper B.2): an attempt
// lost to an infrastructure failure (trial.IsInfra) is logged in the run
// directory's replacements.jsonl and replaced after an exponential back-off,
// up to a limit; an agent failure is a result, never replaced. When the
// runner gives up on a trial it leaves runner-failure.json in the trial
// directory: a runner verdict, not a trial result.
package attempt

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// Policy says how often and how patiently an attempt is replaced.
type Policy struct {
	Replacements int           // at most this many replacements per trial and run
	Backoff      time.Duration // the first wait, doubled per replacement
	// Stop ends the whole run (nil: only this trial waits): called when a
	// local fault (full disk) still holds after the back-off, since every
	// other trial would hit it too.
	Stop func(reason string)
	// Halt, when set, is asked after each infrastructure failure: a
	// non-empty answer (its configuration was stopped) gives the trial up
	// at once with that reason instead of replacing the attempt.
	Halt func() string
}

// Verdict is how a trial's attempts ended: with a result (Summary), or
// interrupted (resumable), or given up (Failed).
type Verdict struct {
	Summary *runrecord.Summary
	// Replacements: with a Summary, every replacement of the trial in the
	// log, across resumed runs; when given up, those of this run.
	Replacements int
	Interrupted  string // why, when the context ended
	Failed       string // why the runner gave up
}

// Trial names the trial whose attempts are run: its key, its directory
// relative to the run directory (for the log) and on disk.
type Trial struct {
	Key, Dir, Path string
}

// Run calls attempt until it returns a result or an error that is not
// replaced. out is the run directory; logf reports each replacement.
func (p Policy) Run(ctx context.Context, out string, t Trial, attempt func(context.Context) (*runrecord.Summary, error), logf func(format string, args ...any)) Verdict {
	var v Verdict
	replacedNow := 0
	for replaced := 0; ; replaced++ {
		replacedNow = replaced
		s, err := attempt(ctx)
		if err == nil {
			v = Verdict{Summary: s, Replacements: CountReplacements(out, t.Key)}
			break
		}
		if ctx.Err() != nil {
			return Verdict{Interrupted: "interrupted: " + ctx.Err().Error()}
		}
		if trial.IsInfra(err) && replaced < p.Replacements && p.Halt != nil {
			if why := p.Halt(); why != "" {
				v = Verdict{Failed: fmt.Sprintf("%s (last attempt: %v)", why, err), Replacements: replaced}
				runrecord.WriteJSON(runrecord.TrialLayout{Dir: t.Path}.RunnerFailure(), runrecord.Failure{Key: t.Key, Reason: v.Failed, Time: time.Now().UTC()})
				return v
			}
		}
		if trial.IsInfra(err) && replaced < p.Replacements {
			rep := runrecord.Replacement{Key: t.Key, Dir: t.Dir, Attempt: CountReplacements(out, t.Key) + 1, Reason: err.Error(), Time: time.Now().UTC()}
			if werr := runrecord.AppendReplacement(runrecord.RunLayout{Dir: out}.Replacements(), rep); werr != nil {
				if trial.IsLocal(err) && p.Stop != nil { // the disk cannot even log it
					reason := fmt.Sprintf("local fault persists (%v); free the space or fix the file system, then rerun the same command to resume", werr)
					p.Stop(reason)
					return Verdict{Interrupted: "stopped: " + reason}
				}
				return Verdict{Failed: werr.Error()}
			}
			wait := p.Backoff << replaced
			logf("%s: %v; replacing the attempt in %s (replacement %d of at most %d)", t.Dir, err, wait, replaced+1, p.Replacements)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return Verdict{Interrupted: "interrupted"}
			}
			if trial.IsLocal(err) && p.Stop != nil {
				if perr := trial.Probe(out); perr != nil {
					reason := fmt.Sprintf("local fault persists (%v); free the space or fix the file system, then rerun the same command to resume", perr)
					p.Stop(reason)
					return Verdict{Interrupted: "stopped: " + reason}
				}
			}
			continue
		}
		v = Verdict{Failed: err.Error(), Replacements: replaced}
		if trial.IsInfra(err) {
			v.Failed = fmt.Sprintf("infrastructure failure persisted after %d replacement(s): %v", replaced, err)
			if p.Halt != nil {
				if why := p.Halt(); why != "" {
					v.Failed += "; " + why
				}
			}
		}
		runrecord.WriteJSON(runrecord.TrialLayout{Dir: t.Path}.RunnerFailure(), runrecord.Failure{Key: t.Key, Reason: v.Failed, Time: time.Now().UTC()})
		return v
	}
	os.Remove(runrecord.TrialLayout{Dir: t.Path}.RunnerFailure()) // a result replaces an earlier run's verdict
	if v.Summary != nil && v.Replacements > 0 && replacedNow == 0 {
		// Replacements of earlier runs, and this run's attempt came
		// through clean: they no longer say anything about the result.
		if err := runrecord.AppendReplacement(runrecord.RunLayout{Dir: out}.Replacements(), runrecord.Replacement{Key: t.Key, Dir: t.Dir, Supersedes: true, Time: time.Now().UTC()}); err == nil {
			v.Replacements = CountReplacements(out, t.Key)
		}
	}
	return v
}

// CountReplacements counts the logged replacements of the trial with key
// that still stand (not superseded).
func CountReplacements(out, key string) int {
	reps, _ := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	n := 0
	for _, r := range reps {
		if r.Key == key && !r.Superseded {
			n++
		}
	}
	return n
}
