package runner

import (
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// The budget counts what the relay saw served: tokens of an attempt killed
// mid-stream are in served.jsonl before any ledger has them; without a
// relay log it counts the ledger plus the replaced and killed attempts.
func TestBudgetCountsWhatWasServed(t *testing.T) {
	l := runrecord.TrialLayout{Dir: t.TempDir()}
	runrecord.WriteLedger(l.Usage(), []runrecord.Invocation{{Role: "developer", Usage: runrecord.Usage{Input: 25, Output: 5, Total: 30}}})
	runrecord.Append(l.ReplacedUsage(), runrecord.Invocation{Role: "planner", Outcome: runrecord.OutcomeKilled, Usage: runrecord.Usage{Input: 15, Output: 5, Total: 20}})
	if got := trialSpent(l).Total; got != 50 {
		t.Errorf("without a relay log: %d, want ledger 30 + killed 20", got)
	}
	for _, u := range []runrecord.Usage{{Input: 25, Output: 5, Total: 30}, {Input: 15, Output: 5, Total: 20}, {Input: 40, Output: 10, Total: 50}} {
		runrecord.Append(l.Served(), runrecord.ServedLine{Status: 200, Usage: u})
	}
	if got := trialSpent(l).Total; got != 100 {
		t.Errorf("with the relay's log: %d, want the 100 served", got)
	}
}
