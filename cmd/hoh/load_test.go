package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// The smoke plan (real Codex CLI, scripted test-double provider on
// loopback, no fault injected) under CPU load, a busy loop per CPU and
// more: no attempt is replaced, no relay error is logged. With a real
// provider each replacement would cost money, so on loopback every one is
// a hoh defect.
func TestSmokePlanUnderCPULoadReplacesNothing(t *testing.T) {
	requireCodex(t)
	bin := buildHoh(t)
	out := filepath.Join(t.TempDir(), "run")
	cfg := smokeConfig(t, out)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for range 2 * runtime.NumCPU() {
		go func() {
			x := 0
			for ctx.Err() == nil {
				for i := range 100000 {
					x += i
				}
			}
			_ = x
		}()
	}
	hohRun(t, bin, "run", "--preflight=off", cfg)
	stop()
	reps, err := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		t.Errorf("replaced under load with no fault injected: %+v", r)
	}
	errs, _ := filepath.Glob(filepath.Join(out, "*", "*", "*", "*", "*.errors"))
	for _, e := range errs {
		b, _ := os.ReadFile(e)
		t.Errorf("relay error log %s: %s", e, strings.TrimSpace(string(b)))
	}
}
