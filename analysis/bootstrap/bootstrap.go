// Package bootstrap computes percentile-bootstrap confidence intervals over
// tasks (paper appendix B.7: 20,000 task resamples, seed 20260729) and paired
// comparisons between arms, and the t-interval on paired differences, whose
// coverage holds at the small numbers of tasks where the percentile
// bootstrap's does not (coverage.go, docs/analysis.md#intervals).
//
// Assumptions: tasks are exchangeable draws from a population of tasks, so
// resampling tasks with replacement mimics drawing a new task sample; the
// interval describes task-sampling uncertainty only (not judge noise or
// run-to-run variation, which a per-task mean of repetitions already folds
// in). The percentile interval assumes the bootstrap distribution of the mean
// is roughly symmetric and unbiased; with few tasks (say under 10) it is too
// narrow and should be read as descriptive.
//
// Resampling: every resample draws n task indices with replacement once and
// recomputes the mean of every column from that one draw, so the columns of
// a task (components, arms) stay together and arms are paired. The draws are
// a function of (seed, number of tasks, resamples) only: two calls with the
// same seed on the same number of tasks see the same resamples whatever
// their columns, so intervals computed in separate calls are still paired.
// Random numbers come from math/rand/v2's PCG seeded with (seed, seed);
// index i is rng.IntN(n).
//
// Percentile rule: with R resamples and alpha = 1 - level, Lo and Hi are the
// k-th smallest resampled means for k = ceil(R*alpha/2) and
// k = ceil(R*(1-alpha/2)) (1-based, clamped to [1, R]). This is the inverse
// empirical CDF, the rule of gonum's stat.Quantile with stat.Empirical, except
// that R*p is snapped to the integer when float rounding leaves it within
// 1e-9 of one (0.95 would otherwise give the 501st, not the 500th, of 20000).
package bootstrap

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Defaults follow the paper's appendix B.7.
const (
	DefaultResamples        = 20000
	DefaultSeed      uint64 = 20260729
	DefaultLevel            = 0.95
)

// Options configure a bootstrap; zero fields take the defaults (so seed 0
// cannot be chosen).
type Options struct {
	Resamples int
	Seed      uint64
	Level     float64
	// Method is the interval of PairedDifference: Percentile (the
	// default, the paper's) or TMethod; Percentile ignores it.
	Method string
}

// Interval methods of PairedDifference.
const (
	PercentileMethod = "percentile" // percentile bootstrap over tasks
	TMethod          = "t"          // t-interval on the paired differences
)

// CheckMethod refuses an unknown interval method.
func CheckMethod(m string) error {
	if m != "" && m != PercentileMethod && m != TMethod {
		return fmt.Errorf("bootstrap: interval %q: want %s or %s", m, PercentileMethod, TMethod)
	}
	return nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if o.Resamples < 1 {
		return o, fmt.Errorf("bootstrap: resamples %d, need at least 1", o.Resamples)
	}
	if !(o.Level > 0 && o.Level < 1) {
		return o, fmt.Errorf("bootstrap: level %v outside (0, 1)", o.Level)
	}
	return o, nil
}

// Interval is a sample mean with its percentile-bootstrap interval.
type Interval struct {
	Mean, Lo, Hi float64
}

// Percentile bootstraps the mean of every column of data, where data[i][j]
// is task i's value in column j (e.g. 4 components x 4 arms = 16 columns).
// It returns one Interval per column. Ragged or non-finite input is an error
// naming the task row and column.
func Percentile(data [][]float64, opt Options) ([]Interval, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	n := len(data)
	if n == 0 {
		return nil, fmt.Errorf("bootstrap: no tasks")
	}
	cols := len(data[0])
	if cols == 0 {
		return nil, fmt.Errorf("bootstrap: task row 0 has no columns")
	}
	flat := make([]float64, 0, n*cols) // row-major: one drawn task is one contiguous row
	for i, row := range data {
		if len(row) != cols {
			return nil, fmt.Errorf("bootstrap: task row %d has %d columns, row 0 has %d", i, len(row), cols)
		}
		for j, v := range row {
			if !finite(v) {
				return nil, fmt.Errorf("bootstrap: task row %d column %d is not finite (%v)", i, j, v)
			}
		}
		flat = append(flat, row...)
	}

	R := opt.Resamples
	means := resampleMeans(flat, n, R, newDraws(opt.Seed, n, R))

	alpha := 1 - opt.Level
	kLo, kHi := orderStat(R, alpha/2), orderStat(R, 1-alpha/2)
	out := make([]Interval, cols)
	col := make([]float64, n)
	for j := range cols {
		for i := range n {
			col[i] = flat[i*cols+j]
		}
		lo, hi := orderStats(means[j*R:(j+1)*R], kLo, kHi)
		out[j] = Interval{Mean: stat.Mean(col, nil), Lo: lo, Hi: hi}
	}
	return out, nil
}

// resampleMeans returns, column-major (so each column sorts in place), the
// mean of every column of flat (n tasks, row-major) in each of R resamples.
func resampleMeans(flat []float64, n, R int, draws *draws) []float64 {
	cols := len(flat) / n
	means := make([]float64, cols*R)
	part := func(from, to int) { // resamples [from, to)
		switch {
		case draws.small != nil && cols > 1:
			sumColumns(flat, means, n, R, from, to, draws.small)
		case draws.small != nil:
			sumResamples(flat, means, n, R, from, to, draws.small)
		case draws.cached != nil:
			sumResamples(flat, means, n, R, from, to, draws.cached)
		default:
			sums := make([]float64, cols)
			for r := from; r < to; r++ {
				sumResample(flat, means, n, R, r, draws.next(), sums)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), R)
	if draws.small == nil && draws.cached == nil || workers < 2 || n*R*cols < parallelWork {
		part(0, R)
		return means
	}
	// Every core takes a share of the resamples; resample r's draws and
	// sum are the same whichever core computes it, so the interval is
	// identical for any GOMAXPROCS.
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part(w*R/workers, (w+1)*R/workers)
		}()
	}
	wg.Wait()
	return means
}

// sumResamples computes resamples [from, to) of cached draws
// (cached[r*n:(r+1)*n] is resample r's) into means. One column (paired
// differences) sums four resamples at a time: each sum still adds its draws
// in order from 0 (so the means are bit for bit those of one at a time), but
// four independent additions overlap in the CPU instead of each waiting for
// the previous one's result.
func sumResamples[I uint8 | int32](flat, means []float64, n, R, from, to int, cached []I) {
	inv := 1 / float64(n)
	at := func(r int) []I { return cached[r*n : (r+1)*n] }
	r := from
	if len(flat) == n {
		for ; r+4 <= to; r += 4 {
			a, b, c, d := at(r), at(r + 1)[:n], at(r + 2)[:n], at(r + 3)[:n]
			var sa, sb, sc, sd float64
			for k := range a {
				sa += flat[a[k]]
				sb += flat[b[k]]
				sc += flat[c[k]]
				sd += flat[d[k]]
			}
			means[r], means[r+1], means[r+2], means[r+3] = sa*inv, sb*inv, sc*inv, sd*inv
		}
	}
	sums := make([]float64, len(flat)/n)
	for ; r < to; r++ {
		sumResample(flat, means, n, R, r, at(r), sums)
	}
}

// sumColumns computes resamples [from, to) of several columns with byte
// draws: four columns at a time (sumColumns4, the last two or three
// padded), and a last lone column as a paired difference's.
func sumColumns(flat, means []float64, n, R, from, to int, cached []uint8) {
	cols := len(flat) / n
	j := 0
	for ; cols-j >= 2; j += 4 {
		sumColumns4(flat, means, n, R, j, min(4, cols-j), from, to, cached)
	}
	if j < cols {
		col := make([]float64, n)
		for i := range col {
			col[i] = flat[i*cols+j]
		}
		sumResamples(col, means[j*R:(j+1)*R], n, R, from, to, cached)
	}
}

// sumColumns4 computes the w (at most 4) columns from j0 of resamples
// [from, to), two resamples at a time: a draw's byte is read once for four
// columns, and eight independent sums overlap in the CPU. Each sum still
// adds its draws in order from 0, as sumResample does.
func sumColumns4(flat, means []float64, n, R, j0, w, from, to int, cached []uint8) {
	cols := len(flat) / n
	var tab [256][4]float64 // task i's values (zero padded); a byte indexes it unchecked
	for i := range n {
		copy(tab[i][:w], flat[i*cols+j0:i*cols+j0+w])
	}
	inv := 1 / float64(n)
	m := means[j0*R : (j0+w)*R]
	for r := from; r < to; r += 2 {
		a := cached[r*n : (r+1)*n]
		b := a // a lone last resample is summed twice, kept once
		if r+1 < to {
			b = cached[(r+1)*n : (r+2)*n]
		}
		b = b[:len(a)]
		var a0, a1, a2, a3, b0, b1, b2, b3 float64
		for k := range a {
			x, y := &tab[a[k]], &tab[b[k]]
			a0, a1, a2, a3 = a0+x[0], a1+x[1], a2+x[2], a3+x[3]
			b0, b1, b2, b3 = b0+y[0], b1+y[1], b2+y[2], b3+y[3]
		}
		sa, sb := [4]float64{a0, a1, a2, a3}, [4]float64{b0, b1, b2, b3}
		for j := range w {
			m[j*R+r] = sa[j] * inv
			if r+1 < to {
				m[j*R+r+1] = sb[j] * inv
			}
		}
	}
}

// sumResample computes resample r, drawing idx, into means.
func sumResample[I uint8 | int32](flat, means []float64, n, R, r int, idx []I, sums []float64) {
	cols := len(sums)
	clear(sums)
	if cols == 1 { // paired differences: a call per draw would cost more than the add
		for _, i := range idx {
			sums[0] += flat[i]
		}
	} else {
		for _, i := range idx {
			floats.Add(sums, flat[int(i)*cols:int(i)*cols+cols]) // gonum's assembly AXPY kernel
		}
	}
	inv := 1 / float64(n)
	for j, s := range sums {
		means[j*R+r] = s * inv
	}
}

// parallelWork is the number of additions above which resampling is
// spread over every core (below it, starting goroutines costs more).
const parallelWork = 1 << 18

// drawKey identifies a sequence of draws: they depend on nothing else.
type drawKey struct {
	seed    uint64
	n, runs int
}

// maxCachedDraws bounds the cached sequence (4 bytes a draw).
var maxCachedDraws = 1 << 23

var drawCache struct {
	sync.Mutex
	key   drawKey
	draws []int32
	small []uint8
}

// draws yields the task indices of each resample in order. A table compares
// many arm pairs over the same tasks with the same seed, so the last whole
// sequence is cached and replayed instead of drawn again, a byte a draw
// when there are at most 256 tasks (a quarter of the memory read per
// comparison); sequences longer than maxCachedDraws are drawn one resample
// at a time.
type draws struct {
	n      int
	cached []int32 // more than 256 tasks
	small  []uint8 // at most 256 tasks
	rng    *rand.Rand
	buf    []int32
}

func newDraws(seed uint64, n, runs int) *draws {
	d := &draws{n: n, rng: rand.New(rand.NewPCG(seed, seed))}
	if n*runs > maxCachedDraws || n > math.MaxInt32 {
		d.buf = make([]int32, n)
		return d
	}
	k := drawKey{seed, n, runs}
	drawCache.Lock()
	defer drawCache.Unlock()
	if drawCache.key != k || drawCache.draws == nil && drawCache.small == nil {
		drawCache.key, drawCache.draws, drawCache.small = k, nil, nil
		if n <= 256 {
			drawCache.small = make([]uint8, n*runs)
			for i := range drawCache.small {
				drawCache.small[i] = uint8(d.rng.IntN(n))
			}
		} else {
			drawCache.draws = make([]int32, n*runs)
			for i := range drawCache.draws {
				drawCache.draws[i] = int32(d.rng.IntN(n))
			}
		}
	}
	d.cached, d.small = drawCache.draws, drawCache.small
	return d
}

// next draws the next resample's indices when they are not cached.
func (d *draws) next() []int32 {
	for i := range d.buf {
		d.buf[i] = int32(d.rng.IntN(d.n))
	}
	return d.buf
}

// selectKth reorders x so that x[k] holds the value it would hold if x were
// sorted, with nothing larger before it and nothing smaller after it
// (Hoare's selection with a median-of-three pivot; expected linear time).
func selectKth(x []float64, k int) {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		pivot := median3(x[lo], x[mid], x[hi])
		i, j := lo, hi
		for i <= j {
			for x[i] < pivot {
				i++
			}
			for x[j] > pivot {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// Now x[lo..j] <= pivot, x[i..hi] >= pivot and x[j+1..i-1] == pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// orderStats returns the kLo-th and kHi-th smallest of x (1-based, kLo <=
// kHi), reordering x. A percentile interval's ranks lie near the ends, so
// thresholds taken from a sample leave a few hundred values beyond them,
// gathered in one pass and selected from: cheaper than two selections over
// all of x. The values are those of any exact selection (the thresholds
// are checked, and anything unexpected falls back to selectKth).
func orderStats(x []float64, kLo, kHi int) (float64, float64) {
	n := len(x)
	const s = 2048               // sample size
	below, above := kLo, n-kHi+1 // ranks from the bottom and the top
	if n < 8*s || 16*below > n || 16*above > n {
		return selectTwo(x, kLo, kHi)
	}
	sample := make([]float64, s)
	for i := range sample {
		sample[i] = x[i*(n/s)]
	}
	// A rank well beyond the expected one (about 4 standard deviations), so
	// that the threshold almost always leaves enough values beyond it.
	margin := func(k int) int { e := k * s / n; return e + 4*int(math.Sqrt(float64(e))) + 8 }
	rLo, rHi := margin(below), s-1-margin(above) // rLo < rHi: both ranks are at most n/16
	tLo, tHi := selectTwo(sample, rLo+1, rHi+1)
	if tLo >= tHi {
		return selectTwo(x, kLo, kHi)
	}
	low, high := make([]float64, 0, n/16), make([]float64, 0, n/16)
	for _, v := range x {
		if v <= tLo {
			low = append(low, v)
		} else if v >= tHi {
			high = append(high, v)
		}
	}
	if len(low) < below || len(high) < above {
		return selectTwo(x, kLo, kHi)
	}
	// Every value not in low is above all of low, and likewise for high.
	selectKth(low, below-1)
	selectKth(high, len(high)-above)
	return low[below-1], high[len(high)-above]
}

// selectTwo is orderStats by two selections over all of x.
func selectTwo(x []float64, kLo, kHi int) (float64, float64) {
	selectKth(x, kLo-1)
	selectKth(x[kLo-1:], kHi-kLo)
	return x[kLo-1], x[kHi-1]
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// orderStat is the 1-based rank of the inverse empirical CDF at p.
func orderStat(R int, p float64) int {
	x := p * float64(R)
	if r := math.Round(x); math.Abs(x-r) < 1e-9 {
		x = r
	}
	k := int(math.Ceil(x))
	return min(max(k, 1), R)
}

// PairedDifference bootstraps mean(a) - mean(b) over the same tasks: a[i] and
// b[i] belong to task i and are always drawn together. Its draws equal those
// of Percentile with the same options on the same number of tasks. With
// Method TMethod it is instead the t-interval of the differences a[i]-b[i].
func PairedDifference(a, b []float64, opt Options) (Interval, error) {
	if len(a) != len(b) {
		return Interval{}, fmt.Errorf("bootstrap: paired arms have %d and %d tasks", len(a), len(b))
	}
	if err := CheckMethod(opt.Method); err != nil {
		return Interval{}, err
	}
	if opt.Method == TMethod {
		diff := make([]float64, len(a))
		for i := range a {
			diff[i] = a[i] - b[i]
		}
		return TInterval(diff, opt.Level)
	}
	d := make([][]float64, len(a))
	for i := range a {
		d[i] = []float64{a[i] - b[i]}
	}
	iv, err := Percentile(d, opt)
	if err != nil {
		return Interval{}, err
	}
	return iv[0], nil
}

// Pair is a paired comparison's two arms, task by task.
type Pair struct{ A, B []float64 }

// pairBatch is how many pairs are resampled together: memory for their
// means grows with it (8 bytes a resample each).
const pairBatch = 16

// PairedDifferences is PairedDifference of each pair: the same intervals
// and errors. Pairs over the same number of tasks draw the same tasks, so
// they are resampled together, as one Percentile's columns, a byte draw
// read once for several pairs.
func PairedDifferences(pairs []Pair, opt Options) ([]Interval, []error) {
	out, errs := make([]Interval, len(pairs)), make([]error, len(pairs))
	byN := map[int][]int{} // pairs that can go together, by their number of tasks
	for p, pr := range pairs {
		n := len(pr.A)
		if n > 0 && n == len(pr.B) && CheckMethod(opt.Method) == nil && opt.Method != TMethod {
			byN[n] = append(byN[n], p)
			continue
		}
		out[p], errs[p] = PairedDifference(pr.A, pr.B, opt)
	}
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		for ps := byN[n]; len(ps) > 0; {
			batch := ps[:min(len(ps), pairBatch)]
			ps = ps[len(batch):]
			data := make([][]float64, n)
			for i := range data {
				data[i] = make([]float64, len(batch))
				for j, p := range batch {
					data[i][j] = pairs[p].A[i] - pairs[p].B[i] // as PairedDifference's
				}
			}
			iv, err := Percentile(data, opt)
			for j, p := range batch {
				if err != nil { // each pair alone, for its own error
					out[p], errs[p] = PairedDifference(pairs[p].A, pairs[p].B, opt)
				} else {
					out[p] = iv[j]
				}
			}
		}
	}
	return out, errs
}

// Record counts per-task outcomes of arm a against arm b.
type Record struct {
	Wins, Ties, Losses int
}

// WinTieLoss compares a[i] with b[i] task by task: a tie when
// |a[i]-b[i]| <= tolerance (0 means exact equality), else a win for the
// larger. Use a tolerance of half the reporting precision to count values
// that round to the same reported number as ties.
func WinTieLoss(a, b []float64, tolerance float64) (Record, error) {
	var rec Record
	if len(a) != len(b) {
		return rec, fmt.Errorf("bootstrap: paired arms have %d and %d tasks", len(a), len(b))
	}
	if !(tolerance >= 0) {
		return rec, fmt.Errorf("bootstrap: tolerance %v must be >= 0", tolerance)
	}
	for i := range a {
		if !finite(a[i]) || !finite(b[i]) {
			return rec, fmt.Errorf("bootstrap: task %d has a non-finite value (%v, %v)", i, a[i], b[i])
		}
		switch d := a[i] - b[i]; {
		case math.Abs(d) <= tolerance:
			rec.Ties++
		case d > 0:
			rec.Wins++
		default:
			rec.Losses++
		}
	}
	return rec, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// TInterval is the t-interval of mean(d) at the level (default 0.95):
// mean +- t(n-1, 1-alpha/2) sd/sqrt(n). Its coverage is exact for normal
// differences at any n and close for symmetric heavy tails; skewed
// differences need more tasks (docs/analysis.md#intervals).
func TInterval(d []float64, level float64) (Interval, error) {
	if level == 0 {
		level = DefaultLevel
	}
	if !(level > 0 && level < 1) {
		return Interval{}, fmt.Errorf("bootstrap: level %v outside (0, 1)", level)
	}
	n := len(d)
	if n < 2 {
		return Interval{}, fmt.Errorf("bootstrap: a t-interval needs at least 2 tasks, have %d", n)
	}
	for i, v := range d {
		if !finite(v) {
			return Interval{}, fmt.Errorf("bootstrap: task row %d is not finite (%v)", i, v)
		}
	}
	m, sd := stat.MeanStdDev(d, nil)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1-(1-level)/2) * sd / math.Sqrt(float64(n))
	return Interval{Mean: m, Lo: m - half, Hi: m + half}, nil
}
