package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/schollz/progressbar/v3"

	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/records"
	"github.com/hoh-research/hoh/experiments/trial"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// lockDir takes an exclusive flock on <out>/.lock so that a second runner on
// the same directory is refused; the kernel drops it when the process dies.
func lockDir(out string) (func(), error) {
	path := filepath.Join(out, ".lock")
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
	f.Truncate(0)
	f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// IsLocked reports whether err is the refusal of a second runner.
func IsLocked(err error) bool { return errors.Is(err, errLocked) }

// TrialLine is one line of trials.jsonl.
type TrialLine struct {
	Key          string             `json:"key"`
	Dir          string             `json:"dir"`
	Config       string             `json:"config"`
	Arm          string             `json:"arm"`
	Task         string             `json:"task"`
	Rep          int                `json:"rep"`
	State        State              `json:"state"`
	Status       trial.Status       `json:"status,omitempty"`
	Reason       string             `json:"reason,omitempty"`
	Usage        any                `json:"usage"`
	Replacements int                `json:"replacements"`
	Final        map[string]float64 `json:"final_metrics,omitempty"`
	Notice       string             `json:"notice,omitempty"`
}

// writeOutputs rewrites scores.csv (every finished trial's rows, plan
// order) and trials.jsonl atomically.
func (r *run) writeOutputs(trials []plan.Trial) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	notice := ""
	if r.exp.Scripted() {
		notice = config.ScriptedNotice
	}
	return WriteOutputs(r.out, trials, r.finished, notice)
}

// WriteOutputs writes scores.csv and trials.jsonl of out for the finished
// outcomes among trials.
func WriteOutputs(out string, trials []plan.Trial, finished map[string]Outcome, notice string) error {
	var rows []results.Row
	var lines bytes.Buffer
	for _, t := range trials {
		o, ok := finished[t.Key]
		if !ok {
			continue
		}
		l := trial.Layout{Dir: filepath.Join(out, t.Dir)}
		line := TrialLine{Key: t.Key, Dir: t.Dir, Config: t.Config, Arm: t.Arm, Task: t.Task.ID, Rep: t.Rep,
			State: o.State, Status: o.Status, Reason: o.Reason, Usage: o.Usage, Replacements: o.Replacements, Notice: notice}
		if o.Status != "" {
			rs, err := results.ReadFile(l.Scores())
			if err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("%s: %w", l.Scores(), err)
			}
			rows = append(rows, rs...)
			var s trial.Summary
			if records.ReadJSON(l.Summary(), &s) == nil && len(s.Checkpoints) > 0 {
				line.Final = s.Checkpoints[len(s.Checkpoints)-1].Metrics
			}
		}
		data, _ := json.Marshal(line)
		lines.Write(data)
		lines.WriteByte('\n')
	}
	var buf bytes.Buffer
	if err := results.Write(&buf, rows); err != nil {
		return err
	}
	if err := records.WriteFile(filepath.Join(out, "scores.csv"), buf.Bytes()); err != nil {
		return err
	}
	return records.WriteFile(filepath.Join(out, "trials.jsonl"), lines.Bytes())
}

// progress shows a bar on a terminal and plain log lines otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	bar      *progressbar.ProgressBar
	total    int
	done     int
	failed   int
	budget   int
	tokens   int64
	prefix   string
	started  time.Time
	finishes int
}

func newProgress(w io.Writer, terminal bool, total int, scripted bool) *progress {
	p := &progress{w: w, total: total, started: time.Now()}
	if scripted {
		p.prefix = "[scripted test double: plumbing check, not results] "
		fmt.Fprintf(w, "NOTE: %s\n", config.ScriptedNotice)
	}
	if terminal {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetDescription(p.prefix+p.describe()), progressbar.OptionFullWidth())
	}
	return p
}

func (p *progress) describe() string {
	return fmt.Sprintf("done %d failed %d remaining %d tokens %d", p.done, p.failed,
		p.total-p.done-p.failed-p.budget, p.tokens)
}

func (p *progress) finished(o Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch o.State {
	case StateDone:
		p.done++
	case StateFailed:
		p.failed++
	case StateBudget:
		p.budget++
	default:
		return // interrupted: still remaining
	}
	p.tokens += o.Usage.Total
	if p.bar != nil {
		p.bar.Describe(p.prefix + p.describe())
		p.bar.Add(1)
		return
	}
	what := string(o.State)
	if o.Status != "" {
		what += " (" + string(o.Status) + ")"
	}
	if o.Reason != "" {
		what += ": " + o.Reason
	}
	if o.Skipped {
		what += " [finished earlier]"
	}
	n := p.done + p.failed + p.budget
	eta := ""
	if p.finishes++; !o.Skipped && n < p.total {
		per := time.Since(p.started) / time.Duration(p.finishes)
		eta = fmt.Sprintf(", ETA %s", (per * time.Duration(p.total-n)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "%s[%d/%d] %s %s: %s (tokens %d; %s%s)\n", p.prefix, n, p.total, o.Trial.Dir, o.Trial.Key, what,
		o.Usage.Total, p.describe(), eta)
}

func (p *progress) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		return
	}
	fmt.Fprintf(p.w, p.prefix+format+"\n", args...)
}

// end finishes the bar.
func (p *progress) end() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}

// Summary renders the end-of-run table: trials per configuration and
// condition by state, tokens, and the mean final-checkpoint score.
func Summary(w io.Writer, res *Result) error {
	type cell struct {
		done, failed, budget, remaining, replaced int
		tokens                                    int64
	}
	cells := map[[2]string]*cell{}
	var order [][2]string
	for _, o := range res.Outcomes {
		k := [2]string{o.Trial.Config, o.Trial.Arm}
		c, ok := cells[k]
		if !ok {
			c = &cell{}
			cells[k] = c
			order = append(order, k)
		}
		switch o.State {
		case StateDone:
			c.done++
		case StateFailed:
			c.failed++
		case StateBudget:
			c.budget++
		default:
			c.remaining++
		}
		c.replaced += o.Replacements
		c.tokens += o.Usage.Total
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("Config", "Condition", "Done", "Failed", "Not run (budget)", "Remaining", "Replacements", "Tokens")
	for _, k := range order {
		c := cells[k]
		t.Append(k[0], k[1], c.done, c.failed, c.budget, c.remaining, c.replaced, c.tokens)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if res.Plan != nil && res.Plan.Experiment.Scripted() {
		fmt.Fprintf(w, "NOTE: %s\n", config.ScriptedNotice)
	}
	return nil
}
