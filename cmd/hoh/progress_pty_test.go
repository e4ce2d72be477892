package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hoh-research/hoh/internal/testenv"
)

// bin/hoh run under a pseudo-terminal (real Codex CLI, scripted test-double
// provider): the bar names the running trial and its role, and its ETA once
// a third of the trials have finished is within 50 % of the time the run
// really took from then on.
func TestRunProgressUnderAPseudoTerminal(t *testing.T) {
	requireCodex(t)
	bin := buildHoh(t)
	out := filepath.Join(t.TempDir(), "run")
	cfg := smokeConfig(t, out)
	data, _ := os.ReadFile(cfg)
	// Three trials of one arm, one at a time: every trial's work is alike.
	text := strings.NewReplacer("conditions: [vanilla, vanilla-continuation@2, hoh@2]", "conditions: [hoh@1]",
		"ids: [greet, calc]", "ids: [greet, fizzbuzz, calc]", "concurrency: 2", "concurrency: 1").Replace(string(data))
	os.WriteFile(cfg, []byte(text), 0o644)
	cmd := exec.Command(bin, "run", "--preflight=off", cfg)
	cmd.Dir = testenv.RepoRoot(t)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	type sample struct {
		at   time.Time
		text string
	}
	var samples []sample
	var all strings.Builder
	sc := bufio.NewScanner(tty)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) { // a bar redraw ends in \r
		for i, b := range data {
			if b == '\r' || b == '\n' {
				return i + 1, data[:i], nil
			}
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			samples = append(samples, sample{time.Now(), sc.Text()})
		}
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("hoh run: %v\n%s", err, all.String())
		}
	case <-time.After(10 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("hoh run did not finish in 10 minutes")
	}
	end := time.Now()
	tty.Close()
	<-done
	etaRE := regexp.MustCompile(`done 1, failed 0, running 1, remaining 1, tokens \d+, ETA ([0-9hms.]+)`)
	var eta time.Duration
	var at time.Time
	for _, s := range samples {
		if m := etaRE.FindStringSubmatch(s.text); m != nil {
			if eta, err = time.ParseDuration(m[1]); err != nil {
				t.Fatal(err)
			}
			at = s.at
			break
		}
	}
	if at.IsZero() {
		t.Fatalf("no bar text after the first trial finished:\n%s", all.String())
	}
	left := end.Sub(at)
	t.Logf("ETA %s after 1 of 3 trials; the run took %s more", eta, left)
	if d := eta - left; d < -left/2 || d > left/2 {
		t.Errorf("ETA %s after a third of the trials, the run took %s more", eta, left)
	}
	if !regexp.MustCompile(`running: (greet|fizzbuzz|calc) hoh@1 it1 (planner|developer|qa)`).MatchString(all.String()) {
		t.Errorf("the bar never named a running trial and its role:\n%s", all.String())
	}
	if strings.Count(all.String(), "scripted test double") < 1 || strings.Contains(all.String(), "[scripted test double: plumbing check") {
		t.Errorf("scripted notice: want it once at the top, not per line:\n%s", all.String())
	}
}
