package main

import (
	"bytes"
	"strings"
	"testing"
)

// plan power on the paper data names the design, the variance components
// and a number of tasks; a missing effect is a usage error.
func TestPlanPowerOnThePaperData(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runPlan([]string{"power", "--effect", "5", "--sims", "100", "--resamples", "300"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"gamecraft codex-gpt-5.5-high hoh@3 vs vanilla, metric overall", "45 tasks", "Between-task variance", "\n1     "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := runPlan([]string{"power"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--effect") {
		t.Errorf("no effect: %v, want a usage error naming --effect", err)
	}
	if err := runPlan([]string{"power", "--effect", "1", "--reps", "2"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "one repetition per task") {
		t.Errorf("reps without a within-task variance: %v", err)
	}
}
