package bootstrap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
)

// scores returns a tasks x cols matrix of GameCraft-like 0-100 scores.
func scores(tasks, cols int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]float64, tasks)
	for i := range out {
		base := 20 + 60*rng.Float64() // task difficulty shared by its columns
		out[i] = make([]float64, cols)
		for j := range out[i] {
			out[i][j] = math.Min(100, math.Max(0, base+float64(j)+10*rng.NormFloat64()))
		}
	}
	return out
}

func TestIntervalsContainTheSampleMean(t *testing.T) {
	data := scores(45, 16, 1)
	ivs, err := Percentile(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for j, iv := range ivs {
		col := make([]float64, len(data))
		for i := range data {
			col[i] = data[i][j]
		}
		if math.Abs(iv.Mean-stat.Mean(col, nil)) > 1e-12 {
			t.Fatalf("column %d: mean %v want %v", j, iv.Mean, stat.Mean(col, nil))
		}
		if !(iv.Lo < iv.Mean && iv.Mean < iv.Hi) {
			t.Fatalf("column %d: interval %+v does not contain the mean", j, iv)
		}
		// Normal theory: half-width ~ 1.96 * SE; the bootstrap agrees to within 15%.
		se := stat.StdDev(col, nil) / math.Sqrt(float64(len(col)))
		if w := (iv.Hi - iv.Lo) / (2 * 1.96 * se); w < 0.85 || w > 1.15 {
			t.Fatalf("column %d: width ratio to normal theory %v", j, w)
		}
	}
}

func TestConstantColumnHasZeroWidth(t *testing.T) {
	data := scores(45, 3, 2)
	for i := range data {
		data[i][1] = 64.12
	}
	ivs, err := Percentile(data, Options{Resamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if ivs[1].Lo != ivs[1].Hi || math.Abs(ivs[1].Lo-64.12) > 1e-9 {
		t.Fatalf("constant column interval %+v", ivs[1])
	}
	if ivs[0].Hi-ivs[0].Lo <= 0 {
		t.Fatalf("varying column interval %+v", ivs[0])
	}
}

func TestSeedDeterminesTheInterval(t *testing.T) {
	data := scores(45, 4, 3)
	a, _ := Percentile(data, Options{Resamples: 3000, Seed: 11})
	b, _ := Percentile(data, Options{Resamples: 3000, Seed: 11})
	c, _ := Percentile(data, Options{Resamples: 3000, Seed: 12})
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different intervals: %v %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Fatalf("different seeds, same intervals: %v", a)
	}
	d, _ := Percentile(data, Options{Resamples: DefaultResamples, Seed: DefaultSeed, Level: DefaultLevel})
	e, _ := Percentile(data, Options{})
	if !slices.Equal(d, e) {
		t.Fatal("zero options must mean the paper's defaults")
	}
}

// Columns are drawn together and draws do not depend on the column count:
// a column bootstrapped alone gets the interval it gets among 16, and a
// column that is exactly twice another gets exactly twice its interval.
func TestColumnsShareDraws(t *testing.T) {
	data := scores(45, 16, 4)
	for i := range data {
		data[i][5] = 2 * data[i][0]
	}
	all, err := Percentile(data, Options{Resamples: 4000})
	if err != nil {
		t.Fatal(err)
	}
	alone := make([][]float64, len(data))
	for i := range data {
		alone[i] = []float64{data[i][3]}
	}
	one, _ := Percentile(alone, Options{Resamples: 4000})
	if one[0] != all[3] {
		t.Fatalf("column 3 alone %+v, among 16 %+v", one[0], all[3])
	}
	if math.Abs(all[5].Lo-2*all[0].Lo) > 1e-9 || math.Abs(all[5].Hi-2*all[0].Hi) > 1e-9 {
		t.Fatalf("doubled column %+v vs %+v", all[5], all[0])
	}
}

// Replays the documented draw sequence with a naive loop and takes the
// quantiles with gonum's stat.Quantile (Empirical); R*p is not near an
// integer here, so the two rules coincide.
func TestMatchesNaiveReplayAndGonumQuantile(t *testing.T) {
	data := scores(7, 2, 5)
	const R, seed, level = 999, 42, 0.95
	got, err := Percentile(data, Options{Resamples: R, Seed: seed, Level: level})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	means := [2][]float64{}
	for range R {
		idx := make([]int, len(data))
		for k := range idx {
			idx[k] = rng.IntN(len(data))
		}
		for j := range 2 {
			s := 0.0
			for _, i := range idx {
				s += data[i][j]
			}
			means[j] = append(means[j], s/float64(len(data)))
		}
	}
	for j := range 2 {
		slices.Sort(means[j])
		lo := stat.Quantile(0.025, stat.Empirical, means[j], nil)
		hi := stat.Quantile(0.975, stat.Empirical, means[j], nil)
		if math.Abs(got[j].Lo-lo) > 1e-9 || math.Abs(got[j].Hi-hi) > 1e-9 {
			t.Fatalf("column %d: got [%v, %v], replay [%v, %v]", j, got[j].Lo, got[j].Hi, lo, hi)
		}
	}
}

// Against the exact bootstrap distribution: with 4 tasks all 4^4 resamples
// are equally likely, so the exact percentiles follow by enumeration.
func TestKnownSmallCaseAgainstEnumeration(t *testing.T) {
	vals := []float64{0, 3, 7, 30}
	var exact []float64
	for a := range 4 {
		for b := range 4 {
			for c := range 4 {
				for d := range 4 {
					exact = append(exact, (vals[a]+vals[b]+vals[c]+vals[d])/4)
				}
			}
		}
	}
	slices.Sort(exact)
	// Exact 256-point distribution: 2.5% -> the 7th smallest, 97.5% -> the 250th.
	lo, hi := exact[6], exact[249]
	// Both quantiles sit on atoms whose cumulative probability clears the
	// threshold by several Monte Carlo standard errors at 50000 resamples.
	data := make([][]float64, 4)
	for i, v := range vals {
		data[i] = []float64{v}
	}
	got, err := Percentile(data, Options{Resamples: 50000})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Lo != lo || got[0].Hi != hi {
		t.Fatalf("bootstrap [%v, %v], exact [%v, %v]", got[0].Lo, got[0].Hi, lo, hi)
	}
	if got[0].Mean != 10 {
		t.Fatalf("mean %v", got[0].Mean)
	}
}

func TestPairedDifference(t *testing.T) {
	data := scores(45, 2, 6)
	a := make([]float64, 45)
	for i := range data {
		a[i] = data[i][0]
	}
	same, err := PairedDifference(a, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if same != (Interval{}) {
		t.Fatalf("identical arms: %+v, want [0, 0]", same)
	}
	// A constant +5 shift over noisy tasks: pairing removes the task noise.
	b := make([]float64, 45)
	for i := range a {
		b[i] = a[i] + 5
	}
	shift, _ := PairedDifference(b, a, Options{})
	if math.Abs(shift.Lo-5) > 1e-9 || math.Abs(shift.Hi-5) > 1e-9 || math.Abs(shift.Mean-5) > 1e-9 {
		t.Fatalf("constant shift: %+v", shift)
	}
	// Equals the interval of the difference column under the same draws.
	c := make([]float64, 45)
	cols := make([][]float64, 45)
	for i := range a {
		c[i] = data[i][1]
		cols[i] = []float64{c[i] - a[i]}
	}
	d, _ := PairedDifference(c, a, Options{Resamples: 5000})
	ref, _ := Percentile(cols, Options{Resamples: 5000})
	if d != ref[0] || !(d.Lo < d.Mean && d.Mean < d.Hi) {
		t.Fatalf("paired %+v vs difference column %+v", d, ref[0])
	}
	if _, err := PairedDifference(a, a[:3], Options{}); err == nil {
		t.Fatal("unequal task counts must be an error")
	}
}

func TestWinTieLoss(t *testing.T) {
	a := []float64{1, 2, 3, 4.004, 0}
	b := []float64{0, 2, 5, 4.0, 0.1}
	r, err := WinTieLoss(a, b, 0)
	if err != nil || r != (Record{Wins: 2, Ties: 1, Losses: 2}) {
		t.Fatalf("exact: %+v %v", r, err)
	}
	r, _ = WinTieLoss(a, b, 0.005)
	if r != (Record{Wins: 1, Ties: 2, Losses: 2}) {
		t.Fatalf("tolerance 0.005: %+v", r)
	}
	if _, err := WinTieLoss(a, b[:2], 0); err == nil {
		t.Fatal("length mismatch must be an error")
	}
	if _, err := WinTieLoss([]float64{math.Inf(1)}, []float64{math.Inf(1)}, 0); err == nil {
		t.Fatal("non-finite must be an error")
	}
}

func TestInputErrors(t *testing.T) {
	cases := []struct {
		data [][]float64
		opt  Options
		want string
	}{
		{nil, Options{}, "no tasks"},
		{[][]float64{{1, 2}, {3}}, Options{}, "task row 1 has 1 columns"},
		{[][]float64{{1, 2}, {3, math.NaN()}}, Options{}, "task row 1 column 1 is not finite"},
		{[][]float64{{1}}, Options{Level: 1.5}, "level 1.5"},
		{[][]float64{{1}}, Options{Resamples: -1}, "resamples -1"},
	}
	for _, c := range cases {
		_, err := Percentile(c.data, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want error containing %q, got %v", c.want, err)
		}
	}
}

func TestOrderStatistics(t *testing.T) {
	for _, c := range []struct {
		R    int
		p    float64
		want int
	}{
		{20000, (1 - 0.95) / 2, 500},
		{20000, 1 - (1-0.95)/2, 19500},
		{999, 0.025, 25},
		{10, 0.001, 1},
		{10, 1, 10},
	} {
		if got := orderStat(c.R, c.p); got != c.want {
			t.Errorf("orderStat(%d, %v) = %d want %d", c.R, c.p, got, c.want)
		}
	}
}

func TestSelectKthAgreesWithSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{1, 2, 3, 5, 17, 100, 1000} {
		for _, distinct := range []int{1, 2, 5, 1 << 30} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(distinct))
			}
			sorted := slices.Sorted(slices.Values(x))
			for _, k := range []int{0, n / 40, n / 2, n - 1 - n/40, n - 1} {
				y := slices.Clone(x)
				selectKth(y, k)
				if y[k] != sorted[k] {
					t.Fatalf("n=%d distinct=%d k=%d: got %v want %v", n, distinct, k, y[k], sorted[k])
				}
				for i := range y {
					if (i < k && y[i] > y[k]) || (i > k && y[i] < y[k]) {
						t.Fatalf("n=%d k=%d: not partitioned at %d", n, k, i)
					}
				}
			}
		}
	}
}

// The paper's component analysis: 20000 resamples over 45 tasks x
// 4 components x 4 conditions.
func BenchmarkPercentile45x16x20000(b *testing.B) {
	data := scores(45, 16, 9)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Percentile(data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Replaying the cached draws gives the intervals drawing afresh gives.
func TestCachedDrawsEqualFreshDraws(t *testing.T) {
	data := make([][]float64, 37)
	for i := range data {
		data[i] = []float64{float64(i*i%11) / 3, float64(i % 7)}
	}
	opt := Options{Resamples: 999, Seed: 7}
	cached, err := Percentile(data, opt)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Percentile(data, opt) // replays the cache
	defer func(m int) { maxCachedDraws = m }(maxCachedDraws)
	maxCachedDraws = 0
	fresh, _ := Percentile(data, opt)
	for j := range fresh {
		if cached[j] != fresh[j] || again[j] != fresh[j] {
			t.Errorf("column %d: cached %+v, replayed %+v, fresh %+v", j, cached[j], again[j], fresh[j])
		}
	}
}

// A table's paired comparison: 20000 resamples of 140 tasks' differences
// (GameCraft's task count), the bootstrap of every compared arm pair.
func BenchmarkPairedDifference140x20000(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := make([]float64, 140), make([]float64, 140)
	for i := range x {
		x[i], y[i] = rng.Float64()*100, rng.Float64()*100
	}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		if _, err := PairedDifference(x, y, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time: on a shared machine wall time also counts others' work.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user + system time of this process.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Several resamples are summed at once and spread over cores; every
// resample's mean must still be bit for bit the in-order sum of its draws,
// for one column (paired differences) and several, on the serial, parallel
// and uncached paths, with draws cached as bytes (up to 256 tasks) and as
// int32, and for a number of resamples that leaves a remainder.
func TestResampleMeansBitForBitNaiveReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	defer func(m int) { maxCachedDraws = m }(maxCachedDraws)
	for _, c := range []struct {
		n, cols, R int
		cached     bool
	}{{140, 1, 2003, true}, {9, 1, 1001, true}, {9, 1, 1001, false}, {140, 3, 2003, true}, {7, 3, 999, false},
		{300, 1, 1001, true}, {256, 1, 1001, true}, {300, 2, 999, true}, {140, 6, 2003, true}, {9, 4, 1001, true},
		{256, 9, 999, true}} {
		flat := make([]float64, c.n*c.cols)
		for i := range flat {
			flat[i] = rng.Float64()*100 - rng.NormFloat64()*1e-3
		}
		maxCachedDraws = 1 << 23
		if !c.cached {
			maxCachedDraws = 0
		}
		d := newDraws(11, c.n, c.R)
		if cached := d.cached != nil || d.small != nil; cached != c.cached || (d.small != nil) != (c.cached && c.n <= 256) {
			t.Fatalf("%+v: draws cached as int32 %v, as bytes %v", c, d.cached != nil, d.small != nil)
		}
		got := resampleMeans(flat, c.n, c.R, d)
		draw := rand.New(rand.NewPCG(11, 11))
		idx := make([]int, c.n)
		for r := range c.R {
			for k := range idx {
				idx[k] = draw.IntN(c.n)
			}
			for j := range c.cols {
				s := 0.0
				for _, i := range idx {
					s += flat[i*c.cols+j]
				}
				if want := s * (1 / float64(c.n)); got[j*c.R+r] != want {
					t.Fatalf("%+v: resample %d column %d mean %v, naive replay %v", c, r, j, got[j*c.R+r], want)
				}
			}
		}
	}
}

// orderStats finds the same values as a sort, for the ranks of the usual
// levels and for data that defeats its sample (ties, sorted, the sampled
// positions holding extremes or one value), where it falls back.
func TestOrderStatsAgreeWithSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const s = 2048
	for _, n := range []int{1000, 16384, 20000, 50001} {
		for shape := range 6 {
			x := make([]float64, n)
			for i := range x {
				switch shape {
				case 0:
					x[i] = rng.NormFloat64()
				case 1:
					x[i] = float64(rng.IntN(3))
				case 2:
					x[i] = float64(i)
				case 3:
					x[i] = float64(n - i)
				case 4, 5: // the sampled positions below all others, or all one value
					x[i] = rng.Float64()
					if n >= s && i%(n/s) == 0 {
						x[i] = map[bool]float64{true: 0.5, false: x[i] - 2}[shape == 5]
					}
				}
			}
			sorted := slices.Sorted(slices.Values(x))
			for _, level := range []float64{0.5, 0.8, 0.9, 0.95, 0.99, 0.999} {
				kLo, kHi := orderStat(n, (1-level)/2), orderStat(n, 1-(1-level)/2)
				lo, hi := orderStats(slices.Clone(x), kLo, kHi)
				if lo != sorted[kLo-1] || hi != sorted[kHi-1] {
					t.Fatalf("n=%d shape %d level %v: got %v, %v want %v, %v", n, shape, level, lo, hi, sorted[kLo-1], sorted[kHi-1])
				}
			}
		}
	}
}

// PairedDifferences gives each pair what PairedDifference gives it, bit for
// bit and error for error: pairs over several numbers of tasks, batches
// with one, two, three and more than pairBatch pairs, a non-finite value,
// unequal and empty arms, and the t-interval.
func TestPairedDifferencesAsOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	arm := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.Float64()*100 - rng.NormFloat64()*1e-3
		}
		return x
	}
	var pairs []Pair
	for _, c := range []struct{ n, count int }{{140, pairBatch + 3}, {9, 2}, {300, 3}, {37, 1}, {50, 5}} {
		for range c.count {
			pairs = append(pairs, Pair{arm(c.n), arm(c.n)})
		}
	}
	bad := arm(140)
	bad[7] = math.Inf(1)
	pairs = append(pairs, Pair{bad, arm(140)}, Pair{arm(3), arm(4)}, Pair{nil, nil})
	for _, opt := range []Options{{Resamples: 999, Seed: 3}, {Resamples: 999, Seed: 3, Method: TMethod}, {Resamples: -1}} {
		got, errs := PairedDifferences(pairs, opt)
		for p, pr := range pairs {
			want, err := PairedDifference(pr.A, pr.B, opt)
			if fmt.Sprint(err) != fmt.Sprint(errs[p]) || got[p] != want {
				t.Fatalf("%+v pair %d (%d tasks): got %+v, %v want %+v, %v", opt, p, len(pr.A), got[p], errs[p], want, err)
			}
		}
	}
}
