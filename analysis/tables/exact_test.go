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
		if got := Signed(v); got != want {
			t.Errorf("Signed(%v) = %q, want %q", v, got, want)
		}
	}
}

func writeCSV(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scores.csv"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// group and category are optional: a table that needs a label its records
// lack says so and prints the rest, and a task whose group is missing or not
// a column is named instead of counting silently in Overall only.
func TestLabelsAreOptionalAndUnknownGroupsReported(t *testing.T) {
	partly := writeCSV(t, `benchmark,config,condition,checkpoint,task,group,metric,value
gamecraft,c1,vanilla,1,t1,Action,overall,40
gamecraft,c1,vanilla,1,t2,,overall,50
gamecraft,c1,vanilla,1,t3,Puzzle,overall,60
gamecraft,c1,hoh,1,t1,Action,overall,45
gamecraft,c1,hoh,1,t2,,overall,55
gamecraft,c1,hoh,1,t3,Puzzle,overall,65
`)
	tb := recordTables(t, "table1", partly)
	cells := cellsByID([]*Table{tb})
	if c := cells["gamecraft/c1/vanilla/all/overall"]; c == nil || c.Computed != 50 {
		t.Errorf("Overall over all three tasks = %+v, want 50", c)
	}
	if c := cells["gamecraft/c1/vanilla/group:Action/overall"]; c == nil || c.Computed != 40 {
		t.Errorf("Action = %+v, want 40 (t1 only)", c)
	}
	want := `gamecraft: 2 task(s) count in the benchmark's overall values but in no group column: t2 (no group), t3 (group "Puzzle")`
	if strings.Join(tb.Warnings, "\n") != want {
		t.Errorf("warnings %q, want %q", tb.Warnings, want)
	}
	var out bytes.Buffer
	if err := renderGrid(&out, []*Table{tb}, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Left out:\n"+want) {
		t.Errorf("text output does not say what is left out:\n%s", out.String())
	}

	none := writeCSV(t, `benchmark,config,condition,checkpoint,task,metric,value
gamecraft,c1,vanilla,1,t1,overall,40
gamecraft,c1,hoh,1,t1,overall,45
frontierswe,c1,vanilla,1,f1,reward,0.2
frontierswe,c1,hoh,1,f1,reward,0.3
`)
	tb = recordTables(t, "table1", none)
	cells = cellsByID([]*Table{tb})
	if c := cells["gamecraft/c1/hoh@1/all/overall"]; c == nil || c.Computed != 45 {
		t.Errorf("Overall without group labels = %+v, want 45", c)
	}
	for _, w := range []string{"gamecraft records carry no group labels", "frontierswe records carry no category labels",
		"Dominance (a macro average over categories) is not computed"} {
		if !strings.Contains(strings.Join(tb.Warnings, "\n"), w) {
			t.Errorf("warnings %q lack %q", tb.Warnings, w)
		}
	}
}
