package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// lockDir takes an exclusive flock on <out>/.lock so that a second runner on
// the same directory is refused; the kernel drops it when the process dies.
func lockDir(out string) (func(), error) {
	path := runrecord.RunLayout{Dir: out}.RunnerLock()
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(path)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("another hoh run is already using %s (%s); wait for it or stop it first: %w",
					out, strings.TrimSpace(string(holder)), errLocked)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The previous holder removes the file before unlocking it: a lock
		// taken on a file no longer at path is retried on the new one.
		held, err1 := f.Stat()
		cur, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, cur) {
			f.Close()
			continue
		}
		f.Truncate(0)
		f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0)
		return func() {
			// No stale .lock naming a finished process stays behind.
			os.Remove(path)
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}, nil
	}
}

var errLocked = errors.New("locked")

// isLocked reports whether err is the refusal of a second runner.
func isLocked(err error) bool { return errors.Is(err, errLocked) }

// writeOutputs rewrites scores.csv (every finished trial's rows, plan
// order) and trials.jsonl atomically.
func (r *run) writeOutputs(trials []plan.Trial) error {
	r.writing.Lock()
	defer r.writing.Unlock()
	return writeRecords(r.out, trials, r.outcomes.finished(), r.exp.Notice())
}

// writeRecords writes scores.csv and trials.jsonl of out for the finished
// outcomes among trials.
func writeRecords(out string, trials []plan.Trial, finished map[string]status.Outcome, notice string) error {
	run := runrecord.RunLayout{Dir: out}
	var rows []runrecord.Row
	var lines []runrecord.TrialLine
	for _, t := range trials {
		o, ok := finished[t.Key]
		if !ok {
			continue
		}
		l := run.Trial(t.Dir)
		line := runrecord.TrialLine{Key: t.Key, Dir: t.Dir, Config: t.Config, Arm: t.Arm, Task: t.Task.ID, Rep: t.Rep,
			State: o.State, Status: o.Status, Reason: o.Reason, Usage: o.Usage, Replacements: o.Replacements, Notice: notice}
		if o.Status != "" {
			rs, err := runrecord.ReadScores(l.Scores())
			if err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("%s: %w", l.Scores(), err)
			}
			rows = append(rows, rs...)
			var s runrecord.Summary
			if runrecord.ReadJSON(l.Summary(), &s) == nil && len(s.Checkpoints) > 0 {
				line.Final = s.Checkpoints[len(s.Checkpoints)-1].Metrics
			}
		}
		lines = append(lines, line)
	}
	if err := runrecord.WriteScores(run.Scores(), rows); err != nil {
		return err
	}
	return runrecord.WriteTrialLines(run.Trials(), lines)
}

// keepInputs copies the config and its provider scripts into the run
// directory. A copy that differs from an earlier one (a resume with
// --allow-changed-config) keeps the earlier one beside it, timestamped.
func keepInputs(out string, e *config.Experiment) error {
	files := map[string]string{"experiment.yaml": e.File}
	for _, c := range e.Configs {
		if c.IsScripted() && c.Scripted != nil {
			files["provider-script-"+c.Label+".yaml"] = e.Resolve(c.Scripted.Script)
		}
	}
	for name, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("keep a copy of %s: %w", src, err)
		}
		dst := filepath.Join(runrecord.RunLayout{Dir: out}.Inputs(), name)
		old, err := os.ReadFile(dst)
		switch {
		case err == nil && bytes.Equal(old, data):
			continue
		case err == nil:
			st, _ := os.Stat(dst)
			stamp := time.Now().UTC()
			if st != nil {
				stamp = st.ModTime().UTC()
			}
			if err := os.Rename(dst, dst+"."+stamp.Format("20060102T150405Z")); err != nil {
				return err
			}
		case !os.IsNotExist(err):
			return err
		}
		if err := runrecord.WriteFile(dst, data); err != nil {
			return err
		}
	}
	return nil
}
