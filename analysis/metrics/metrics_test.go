package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

const recs = `benchmark,config,condition,checkpoint,task,family,group,category,metric,value,tokens,rep
gc,c1,vanilla,1,t1,shooter,Action,,overall,40,1000000,1
gc,c1,vanilla,1,t1,shooter,Action,,overall,50,3000000,2
gc,c1,vanilla,1,t2,shooter,Action,,overall,20,2000000,1
gc,c1,vanilla,1,t3,puzzle,Strategy,,overall,60,4000000,1
gc,c1,hoh,3,t1,shooter,Action,,overall,70,9000000,1
gc,c1,hoh,3,t2,shooter,Action,,overall,30,6000000,1
gc,c1,hoh,3,t3,puzzle,Strategy,,overall,80,12000000,1
gc,c1,hoh,1,t1,shooter,Action,,overall,50,,1
gc,c1,hoh,1,t2,shooter,Action,,overall,50,,1
gc,c1,hoh,2,t1,shooter,Action,,overall,50,5000000,1
gc,c1,hoh,2,t2,shooter,Action,,overall,50,,1
gc,c2,vanilla,1,t1,shooter,Action,,overall,10,,1
`

func load(t *testing.T, text string) []runrecord.Row {
	t.Helper()
	rows, err := runrecord.DecodeScores(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	set, err := results.NewSet(rows)
	if err != nil {
		t.Fatal(err)
	}
	return set.Rows()
}

func sel(cond string, cp int) Selector {
	return Selector{Benchmark: "gc", Config: "c1", Arm: runrecord.Arm{Condition: cond, Checkpoint: cp}, Metric: "overall"}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestTaskValuesAveragesRepetitionsFirst(t *testing.T) {
	rows := load(t, recs)
	v, err := NewIndex(rows).TaskValues(sel("vanilla", 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 3 || v["t1"] != 45 || v["t2"] != 20 || v["t3"] != 60 {
		t.Fatalf("values %v", v)
	}
	s, err := Summarize(v)
	if err != nil {
		t.Fatal(err)
	}
	// Task mean (45+20+60)/3, not the row mean (40+50+20+60)/4.
	if !near(s.Mean, 125.0/3) || s.N != 3 {
		t.Fatalf("summary %+v", s)
	}
	sd := math.Sqrt((math.Pow(45-125.0/3, 2) + math.Pow(20-125.0/3, 2) + math.Pow(60-125.0/3, 2)) / 2)
	if !near(s.SE, sd/math.Sqrt(3)) {
		t.Fatalf("SE %v want %v", s.SE, sd/math.Sqrt(3))
	}
	if _, err := NewIndex(rows).TaskValues(sel("hoh", 9)); err == nil || !strings.Contains(err.Error(), "gc/c1/hoh@9/overall") {
		t.Fatalf("missing arm error: %v", err)
	}
}

func TestSummarizeByGroupAndFamily(t *testing.T) {
	rows := load(t, recs)
	v, _ := NewIndex(rows).TaskValues(sel("hoh", 3))
	groups, err := NewIndex(rows).Labels("gc", Group)
	if err != nil {
		t.Fatal(err)
	}
	by, err := SummarizeBy(v, groups)
	if err != nil {
		t.Fatal(err)
	}
	if by["Action"].Mean != 50 || by["Action"].N != 2 || by["Strategy"].Mean != 80 || by["Strategy"].N != 1 {
		t.Fatalf("by group %+v", by)
	}
	if !math.IsNaN(by["Strategy"].SE) {
		t.Fatalf("SE of one task should be NaN, got %v", by["Strategy"].SE)
	}
	fam, _ := NewIndex(rows).Labels("gc", Family)
	if fam["t3"] != "puzzle" {
		t.Fatalf("families %v", fam)
	}
	delete(groups, "t2")
	if _, err := SummarizeBy(v, groups); err == nil || !strings.Contains(err.Error(), "t2") {
		t.Fatalf("unlabelled task error: %v", err)
	}
	if _, err := NewIndex(rows).Labels("gc", Category); err == nil {
		t.Fatal("no category labels should be an error")
	}
	bad := append([]runrecord.Row{}, rows...)
	bad[0].Group, bad[0].Source = "Timing", "x.csv"
	if _, err := NewIndex(bad).Labels("gc", Group); err == nil || !strings.Contains(err.Error(), "t1") {
		t.Fatalf("conflicting label error: %v", err)
	}
}

func TestDeltaNeedsBothArms(t *testing.T) {
	rows := load(t, recs)
	h, _ := NewIndex(rows).TaskValues(sel("hoh", 3))
	v, _ := NewIndex(rows).TaskValues(sel("vanilla", 1))
	d, err := Delta(h, v)
	if err != nil {
		t.Fatal(err)
	}
	if d["t1"] != 25 || d["t2"] != 10 || d["t3"] != 20 {
		t.Fatalf("delta %v", d)
	}
	md, err := MeanDelta(h, v)
	if err != nil || !near(md, 55.0/3) {
		t.Fatalf("mean delta %v %v", md, err)
	}
	h1, _ := NewIndex(rows).TaskValues(sel("hoh", 1))
	_, err = Delta(h1, v)
	if err == nil || !strings.Contains(err.Error(), "only in the second: t3") {
		t.Fatalf("missing task error: %v", err)
	}
}

func TestOverallGateWeightsAndClamp(t *testing.T) {
	// Paper Table 15, Tower Defense HoH@2: components 67.50 70.00 77.08 51.25 -> 64.12.
	got := Overall(67.50, 70.00, 77.08, 51.25, true, PaperWeights)
	if math.Round(got*100)/100 != 64.12 {
		t.Fatalf("overall %v, paper 64.12", got)
	}
	if Overall(100, 100, 100, 100, false, PaperWeights) != 0 {
		t.Fatal("failed build must score 0")
	}
	if Overall(100, 100, 100, 100, true, Weights{1, 1, 1, 1}) != 100 {
		t.Fatal("overall must clamp to 100")
	}
	if Overall(-10, 0, 0, 0, true, PaperWeights) != 0 {
		t.Fatal("overall must clamp to 0")
	}
	if !near(Overall(10, 20, 30, 40, true, VisualNovelWeights), 0.2*10+0.3*20+0.15*30+0.35*40) {
		t.Fatal("visual-novel weights")
	}
}

func TestOverallFromComponents(t *testing.T) {
	rows := load(t, `benchmark,config,condition,checkpoint,task,metric,value,rep
gc,c1,hoh,3,td,mechanics,67.5,1
gc,c1,hoh,3,td,depth,70,1
gc,c1,hoh,3,td,visuals,77.08,1
gc,c1,hoh,3,td,art,51.25,1
gc,c1,hoh,3,td,build,1,1
gc,c1,hoh,3,td,mechanics,100,2
gc,c1,hoh,3,td,depth,100,2
gc,c1,hoh,3,td,visuals,100,2
gc,c1,hoh,3,td,art,100,2
gc,c1,hoh,3,td,build,0,2
gc,c1,hoh,3,vn,mechanics,10,1
gc,c1,hoh,3,vn,depth,20,1
gc,c1,hoh,3,vn,visuals,30,1
gc,c1,hoh,3,vn,art,40,1
gc,c1,hoh,3,vn,build,1,1
`)
	w := func(task string) Weights {
		if task == "vn" {
			return VisualNovelWeights
		}
		return PaperWeights
	}
	o, err := NewIndex(rows).OverallFromComponents(sel("hoh", 3), w)
	if err != nil {
		t.Fatal(err)
	}
	// rep 2 failed its build: gate per trial, then average (not gate of the averages).
	if !near(o["td"], Overall(67.5, 70, 77.08, 51.25, true, PaperWeights)/2) {
		t.Fatalf("td %v", o["td"])
	}
	if !near(o["vn"], 26.5) {
		t.Fatalf("vn %v", o["vn"])
	}
	_, err = NewIndex(rows[1:]).OverallFromComponents(sel("hoh", 3), w)
	if err == nil || !strings.Contains(err.Error(), "task td rep 1 lacks metric mechanics") {
		t.Fatalf("missing component error: %v", err)
	}
}

// The benchmark's own rubric formulas use exactly PaperWeights or, for five
// visual-novel tasks, VisualNovelWeights.
func TestWeightsMatchBenchmarkRubrics(t *testing.T) {
	dir := testenv.SharedPath(t, "benchmarks", "gamecraft-bench", "tasks")
	files, err := filepath.Glob(filepath.Join(dir, "*", "tests", "rubric.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("GameCraft rubrics not found under %s (shared/ must sit beside the repository): %v", dir, err)
	}
	coef := regexp.MustCompile(`([0-9.]+)\*\(`)
	vn, checked := 0, 0
	for _, f := range files {
		if filepath.Base(filepath.Dir(filepath.Dir(f))) == "example" {
			continue // upstream's template directory, not one of the 140 tasks
		}
		checked++
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ScoreFormula string `json:"score_formula"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := coef.FindAllStringSubmatch(r.ScoreFormula, -1)
		if len(m) != 4 {
			t.Fatalf("%s: formula %q", f, r.ScoreFormula)
		}
		div := 1.0
		if strings.HasSuffix(strings.TrimSpace(r.ScoreFormula), "/ 20") {
			div = 20
		}
		var c [4]float64
		for i := range m {
			c[i], _ = strconv.ParseFloat(m[i][1], 64)
			c[i] /= div
		}
		w := Weights{c[0], c[1], c[2], c[3]}
		switch {
		case w == PaperWeights:
		case w == VisualNovelWeights && strings.Contains(f, "visualnovel-"):
			vn++
		default:
			t.Fatalf("%s: weights %+v match neither PaperWeights nor VisualNovelWeights", f, w)
		}
	}
	if vn != 5 || checked != 140 {
		t.Fatalf("%d visual-novel tasks with their own weights of %d tasks, want 5 of 140", vn, checked)
	}
}

func TestTokensAndEta(t *testing.T) {
	rows := load(t, recs)
	v, err := NewIndex(rows).MeanTokensMillions(sel("vanilla", 1))
	if err != nil {
		t.Fatal(err)
	}
	// t1 reps average to 2M, so (2+2+4)/3.
	if !near(v.Mean, 8.0/3) || v.N != 3 {
		t.Fatalf("vanilla tokens %+v", v)
	}
	h, err := NewIndex(rows).MeanTokensMillions(sel("hoh", 3))
	if err != nil || !near(h.Mean, 9) {
		t.Fatalf("hoh tokens %+v %v", h, err)
	}
	e, err := NewIndex(rows).Efficiency(sel("hoh", 3), sel("vanilla", 1))
	if err != nil {
		t.Fatal(err)
	}
	wantEta := (60 - 125.0/3) / (9 - 8.0/3)
	if !near(e.Eta, wantEta) || !near(e.ScoreDelta, 60-125.0/3) || !near(e.TokensDelta, 9-8.0/3) {
		t.Fatalf("efficiency %+v want eta %v", e, wantEta)
	}
	// hoh@1 has no tokens at all: eta is undefined, and says why.
	_, err = NewIndex(rows).Efficiency(sel("hoh", 1), sel("vanilla", 1))
	var u *UndefinedError
	if !errors.As(err, &u) || u.Reason != "tokens missing for the compared arm" {
		t.Fatalf("undefined eta: %v", err)
	}
	if _, err := NewIndex(rows).MeanTokensMillions(sel("hoh", 1)); !errors.Is(err, ErrNoTokens) {
		t.Fatalf("want ErrNoTokens, got %v", err)
	}
	// hoh@2: t1 has tokens, t2 does not.
	if _, err := NewIndex(rows).MeanTokensMillions(sel("hoh", 2)); err == nil || !strings.Contains(err.Error(), "t2 lack them") {
		t.Fatalf("partial tokens error: %v", err)
	}
	if _, err := Eta(5, 1, 3, 3); !errors.As(err, &u) || u.Reason != "token difference is zero" {
		t.Fatalf("zero difference: %v", err)
	}
	if got, err := Eta(5, 1, 3, 1); err != nil || got != 2 {
		t.Fatalf("eta %v %v", got, err)
	}
}

func TestMatrixAlignsSeries(t *testing.T) {
	rows := load(t, recs)
	tasks, data, err := NewIndex(rows).Matrix(sel("vanilla", 1), sel("hoh", 3))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tasks, ",") != "t1,t2,t3" || data[0][0] != 45 || data[0][1] != 70 || data[2][1] != 80 {
		t.Fatalf("matrix %v %v", tasks, data)
	}
	_, _, err = NewIndex(rows).Matrix(sel("vanilla", 1), sel("hoh", 1))
	if err == nil || !strings.Contains(err.Error(), "task t3 is missing from gc/c1/hoh@1/overall") {
		t.Fatalf("missing task error: %v", err)
	}
}

func TestExactMeanOfDecimals(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{0.1, 0.2}, 0.15},
		{[]float64{0.3, 0.6}, 0.45},
		{[]float64{0.2, 0.4}, 0.3},
		{[]float64{0.1, 0.2, 0.3}, 0.2},
		{[]float64{1e-20, 3e-20}, 2e-20},
		{[]float64{7}, 7},
	} {
		if got := ExactMean(c.in); got != c.want {
			t.Errorf("ExactMean(%v) = %v, want exactly %v", c.in, got, c.want)
		}
	}
}

// The integer fast path agrees with rational arithmetic on short decimals.
func TestSmallDecimalMeanEqualsRationalMean(t *testing.T) {
	seed := uint64(1)
	next := func(n uint64) uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return (seed >> 33) % n
	}
	for i := 0; i < 20000; i++ {
		vs := make([]float64, 2+next(9))
		for j := range vs {
			d := next(5)
			v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(int64(next(2000000))-1000000)/math.Pow(10, float64(d)), 'f', int(d), 64), 64)
			vs[j] = v
		}
		got, ok := smallDecimalMean(vs)
		if !ok {
			t.Fatalf("%v: fast path refused short decimals", vs)
		}
		if want := ratMean(vs); got != want {
			t.Fatalf("%v: fast path %v, rational %v", vs, got, want)
		}
	}
}

// MeanDeltaExact needs the same tasks in both arms: equal sizes with one
// task swapped are refused, naming the tasks, as are unequal sizes.
func TestMeanDeltaExactSameTasks(t *testing.T) {
	r := func(a int64) *big.Rat { return big.NewRat(a, 3) }
	base := map[string]*big.Rat{"t1": r(1), "t2": r(2)}
	d, err := MeanDeltaExact(map[string]*big.Rat{"t2": r(4), "t1": r(3)}, base)
	if err != nil || d.Cmp(big.NewRat(2, 3)) != 0 {
		t.Fatalf("same tasks: %v, %v", d, err)
	}
	for _, x := range []map[string]*big.Rat{{"t1": r(1), "t3": r(2)}, {"t1": r(1)}, {"t1": r(1), "t2": r(2), "t3": r(3)}} {
		if _, err := MeanDeltaExact(x, base); err == nil || !strings.Contains(err.Error(), "do not cover the same tasks") {
			t.Errorf("%v against %v: %v", x, base, err)
		}
	}
}
