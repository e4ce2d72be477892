package tables

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two repetitions averaging to exactly another arm's value are a tie: in
// binary floats (0.1+0.2)/2 = 0.15000000000000002 would beat 0.15, turn
// Dominance cells of 50 into 66.67/44.44 and W/T/L 0/3/0 into 1/1/1.
const exactTies = `benchmark,config,condition,checkpoint,task,category,metric,value,rep
frontierswe,c1,vanilla,1,t1,Implementation,reward,0.15,1
frontierswe,c1,vanilla,1,t2,Performance,reward,0.45,1
frontierswe,c1,vanilla,1,t3,Research,reward,0.3,1
frontierswe,c1,hoh,1,t1,Implementation,reward,0.1,1
frontierswe,c1,hoh,1,t1,Implementation,reward,0.2,2
frontierswe,c1,hoh,1,t2,Performance,reward,0.3,1
frontierswe,c1,hoh,1,t2,Performance,reward,0.6,2
frontierswe,c1,hoh,1,t3,Research,reward,0.2,1
frontierswe,c1,hoh,1,t3,Research,reward,0.4,2
`

func TestRepetitionMeansTieExactly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scores.csv"), []byte(exactTies), 0o644); err != nil {
		t.Fatal(err)
	}
	tb := recordTables(t, "table1", dir)
	cells := cellsByID([]*Table{tb})
	for _, id := range []string{"frontierswe/c1/vanilla/all/dominance_pct", "frontierswe/c1/hoh@1/all/dominance_pct"} {
		if c := cells[id]; c == nil || c.Computed != 50 {
			t.Errorf("%s = %+v, want exactly 50 (every task ties)", id, c)
		}
	}
	if len(tb.Comparisons) != 1 {
		t.Fatalf("comparisons %+v, want one (hoh@1 vs vanilla)", tb.Comparisons)
	}
	c := tb.Comparisons[0]
	if c.Wins != 0 || c.Ties != 3 || c.Losses != 0 || c.MeanDiff != 0 || c.Lo != 0 || c.Hi != 0 {
		t.Errorf("comparison %+v, want W/T/L 0/3/0 and a difference of exactly 0", c)
	}
	var out bytes.Buffer
	if err := renderGrid(&out, []*Table{tb}, false); err != nil {
		t.Fatal(err)
	}
	if want := "reward HoH@1 vs Vanilla: 0.00 [0.00, 0.00], n=3, W/T/L 0/3/0"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

func TestSignedPrintsZeroUnsigned(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", 0.004: "+0.00", -0.004: "-0.00", 1.5: "+1.50", -2: "-2.00"} {
		if got := signed(v); got != want {
			t.Errorf("signed(%v) = %q, want %q", v, got, want)
		}
	}
}
