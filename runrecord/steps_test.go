package runrecord

import (
	"path/filepath"
	"reflect"
	"testing"
)

// steps.json as the runner writes it and reads it back (hoh rescore), and
// the step directories' names.
func TestStepsRecordRoundTrip(t *testing.T) {
	l := TrialLayout{Dir: t.TempDir()}
	recs := []StepRecord{
		{Name: "scaffold", Dir: "steps/01-scaffold", Checkpoint: 2, Metrics: map[string]float64{"reward": 1, "x.y": 0.5}},
		{Name: "implement", Dir: "steps/02-implement", StartFailure: "setup.sh exited 1", Stopped: "no reward"},
		{Name: "document", NotRun: true},
	}
	if err := WriteJSON(l.StepsRecord(), recs); err != nil {
		t.Fatal(err)
	}
	var got []StepRecord
	if err := ReadJSON(l.StepsRecord(), &got); err != nil || !reflect.DeepEqual(got, recs) {
		t.Errorf("read back %+v, %v", got, err)
	}
	if s := l.Step(1, "implement"); s.Dir != filepath.Join(l.Dir, StepsDir, "02-implement") || filepath.Base(s.StartFailure()) != StepStartFailure {
		t.Errorf("step layout %s", s.Dir)
	}
}
