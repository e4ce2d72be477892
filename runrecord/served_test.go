package runrecord

import (
	"os"
	"reflect"
	"testing"
	"time"
)

// served.jsonl as the relay appends it and the resume, the budget and the
// tests read it back: a line torn by a kill is skipped, not an error.
func TestServedRoundTrip(t *testing.T) {
	path := TrialLayout{Dir: t.TempDir()}.Served()
	want := []ServedLine{
		{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Path: "/v1/responses", Status: 200,
			Usage: Usage{Input: 100, CachedInput: 10, Output: 7, Reasoning: 2, Total: 107}, Attempt: "iter-01/planner/attempt-1"},
		{Time: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), Path: "/v1/responses", Status: 502, Attempt: "iter-01/developer/attempt-2"},
	}
	for _, l := range want {
		if err := Append(path, l); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-01-02T03:04:07Z","path":"/v1/resp`)
	f.Close()
	got, total, err := ReadServed(path)
	if err != nil || !reflect.DeepEqual(got, want) || total != want[0].Usage {
		t.Errorf("read back %+v (total %+v, %v), wrote %+v", got, total, err, want)
	}
	if lines, _, err := ReadServed(path + ".missing"); err != nil || lines != nil {
		t.Errorf("a missing log: %v %v", lines, err)
	}
}
