package status

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

// Progress shows a bar on a terminal and plain log lines otherwise.
type Progress struct {
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

// NewProgress starts the progress of total trials; scripted runs say on
// every line that the model is the test double.
func NewProgress(w io.Writer, terminal bool, total int, scripted bool) *Progress {
	p := &Progress{w: w, total: total, started: time.Now()}
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

func (p *Progress) describe() string {
	return fmt.Sprintf("done %d failed %d remaining %d tokens %d", p.done, p.failed,
		p.total-p.done-p.failed-p.budget, p.tokens)
}

// Finished counts a trial that reached a final state (an interrupted one
// stays remaining).
func (p *Progress) Finished(o Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch o.State {
	case runrecord.StateDone:
		p.done++
	case runrecord.StateFailed:
		p.failed++
	case runrecord.StateBudget:
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

// Logf prints a line unless a bar is shown.
func (p *Progress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		return
	}
	fmt.Fprintf(p.w, p.prefix+format+"\n", args...)
}

// End finishes the bar.
func (p *Progress) End() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
