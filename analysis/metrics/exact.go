package metrics

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// Exact arithmetic. Every value a table prints is computed in rationals
// (math/big.Rat) from the decimals as written in the records: repetition
// means, task means, deltas, the GameCraft Overall, token means and eta.
// Floats appear only where a result is displayed or drawn (rounded once,
// from the exact value) and in the bootstrap, which resamples floats: its
// output is an interval, not a value compared digit for digit.

// RowExact is a row's value as written: its exact decimal.
func RowExact(r *runrecord.Row) *big.Rat {
	if r.Exact != nil {
		return r.Exact
	}
	return FloatExact(r.Value)
}

// FloatExact is the shortest decimal that prints f (the number as written
// in a record, a config or a weight), exactly; NaN and infinities are 0.
func FloatExact(f float64) *big.Rat {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return new(big.Rat)
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	// b is [-]d[.ddd]e±XX: an int64 mantissa of at most 17 digits.
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var m int64
	digits := 0
	i := 0
	for ; i < len(b) && b[i] != 'e'; i++ {
		if b[i] == '.' {
			continue
		}
		m = m*10 + int64(b[i]-'0')
		digits++
	}
	e, _ := strconv.Atoi(string(b[i+1:]))
	e -= digits - 1 // value = m * 10^e
	if neg {
		m = -m
	}
	r := new(big.Rat)
	switch {
	case e >= 0 && e <= 18:
		r.SetInt64(m)
		if e > 0 {
			r.Mul(r, new(big.Rat).SetInt(pow10(e)))
		}
	case e < 0 && e >= -18:
		r.SetFrac64(m, pow10i(-e))
	default:
		r.SetInt64(m)
		p := new(big.Rat).SetInt(pow10(abs(e)))
		if e > 0 {
			r.Mul(r, p)
		} else {
			r.Quo(r, p)
		}
	}
	return r
}

func abs(e int) int {
	if e < 0 {
		return -e
	}
	return e
}

func pow10i(e int) int64 {
	p := int64(1)
	for range e {
		p *= 10
	}
	return p
}

func pow10(e int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
}

// Float is the float64 nearest r (rounded once); never -0.
func Float(r *big.Rat) float64 {
	if r == nil || r.Sign() == 0 {
		return 0
	}
	// Task means are small fractions: when numerator and denominator are
	// exact float64s (|x| <= 2^53), one IEEE division rounds their quotient
	// to the nearest float64, as Rat.Float64 does, without its allocations.
	if n := r.Num(); n.IsInt64() {
		a := n.Int64()
		if r.IsInt() {
			if -1<<53 <= a && a <= 1<<53 {
				return float64(a)
			}
		} else if d := r.Denom(); d.IsInt64() {
			if b := d.Int64(); -1<<53 <= a && a <= 1<<53 && b <= 1<<53 {
				return float64(a) / float64(b)
			}
		}
	}
	f, _ := r.Float64()
	return f
}

// MeanExact is the exact mean of values; nil for none.
func MeanExact(values []*big.Rat) *big.Rat {
	if len(values) == 0 {
		return nil
	}
	if m, ok := meanInt64(values); ok {
		return m
	}
	sum := new(big.Rat)
	for _, v := range values {
		sum.Add(sum, v)
	}
	return sum.Quo(sum, new(big.Rat).SetInt64(int64(len(values))))
}

// meanInt64 is MeanExact when every numerator and the least common
// denominator fit in int64 (means of decimals: denominators n x 10^s):
// the numerators are summed as integers over that denominator and one
// rational is made. ok false on any overflow.
func meanInt64(values []*big.Rat) (*big.Rat, bool) {
	lcm := int64(1)
	for _, v := range values {
		if !v.Num().IsInt64() || !v.Denom().IsInt64() {
			return nil, false
		}
		d := v.Denom().Int64()
		if lcm%d == 0 {
			continue
		}
		g := gcd(lcm, d)
		if lcm/g > math.MaxInt64/d {
			return nil, false
		}
		lcm = lcm / g * d
	}
	var sum int64
	for _, v := range values {
		f := lcm / v.Denom().Int64()
		n := v.Num().Int64()
		hi, lo := bits.Mul64(uint64(abs64(n)), uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, false
		}
		term := int64(lo)
		if n < 0 {
			term = -term
		}
		if (term > 0 && sum > math.MaxInt64-term) || (term < 0 && sum < math.MinInt64-term) {
			return nil, false
		}
		sum += term
	}
	den := new(big.Int).Mul(big.NewInt(lcm), big.NewInt(int64(len(values))))
	return new(big.Rat).SetFrac(big.NewInt(sum), den), true
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n // MinInt64 stays negative: bits.Mul64 of its uint64 overflows and is refused
	}
	return n
}

// Floats rounds each value of a per-task series once.
func Floats(values map[string]*big.Rat) map[string]float64 {
	out := make(map[string]float64, len(values))
	for t, v := range values {
		out[t] = Float(v)
	}
	return out
}

// SummarizeExact is Summarize of exact per-task values: Exact is the exact
// task mean, Mean its nearest float, SE from the rounded values (a spread,
// never compared digit for digit).
func SummarizeExact(values map[string]*big.Rat) (Summary, error) {
	if len(values) == 0 {
		return Summary{}, fmt.Errorf("metrics: no tasks to average")
	}
	// One sort of the tasks serves both sums, and no float map is built:
	// the floats are summed in the same (sorted) order as Summarize's.
	xs := make([]*big.Rat, 0, len(values))
	fs := make([]float64, 0, len(values))
	for _, t := range TasksOf(values) {
		xs = append(xs, values[t])
		fs = append(fs, Float(values[t]))
	}
	s := summarize(fs)
	s.Exact = MeanExact(xs)
	s.Mean = Float(s.Exact)
	return s, nil
}

// TasksOf is Tasks for any per-task map.
func TasksOf[V any](values map[string]V) []string {
	out := make([]string, 0, len(values))
	for t := range values {
		out = append(out, t)
	}
	sortStrings(out)
	return out
}

// MeanDeltaExact is mean(treated) - mean(baseline) over the same tasks,
// exactly: a permuted arm equal to its baseline task by task is exactly 0.
func MeanDeltaExact(treated, baseline map[string]*big.Rat) (*big.Rat, error) {
	if err := sameTasks(treated, baseline); err != nil {
		return nil, err
	}
	a, err := SummarizeExact(treated)
	if err != nil {
		return nil, err
	}
	b, _ := SummarizeExact(baseline)
	return new(big.Rat).Sub(a.Exact, b.Exact), nil
}

func sameTasks(a, b map[string]*big.Rat) error {
	if len(a) == len(b) && keysIn(a, b) { // the usual case, without Align's maps and sort
		return nil
	}
	fa := make(map[string]float64, len(a))
	for t := range a {
		fa[t] = 0
	}
	fb := make(map[string]float64, len(b))
	for t := range b {
		fb[t] = 0
	}
	_, _, _, err := Align(fa, fb)
	return err
}

// keysIn reports whether every key of a is in b.
func keysIn(a, b map[string]*big.Rat) bool {
	for t := range a {
		if _, ok := b[t]; !ok {
			return false
		}
	}
	return true
}

// TaskExact returns task -> the exact mean of the task's repetitions for
// the selector. It is an error if no row matches. The map is shared.
func (x *Index) TaskExact(sel Selector) (map[string]*big.Rat, error) {
	if v, ok := x.exact[sel]; ok {
		return v, nil
	}
	idx := x.series[sel]
	if len(idx) == 0 {
		return nil, fmt.Errorf("metrics: no rows for %s", sel)
	}
	if out, ok := x.taskExactScaled(idx); ok {
		x.exact[sel] = out
		return out, nil
	}
	out := make(map[string]*big.Rat, len(idx))
	var reps map[string][]*big.Rat // only tasks with more than one repetition
	for _, i := range idx {
		r := x.row(i)
		v := RowExact(&r)
		if prev, dup := out[r.Task]; dup {
			if reps == nil {
				reps = map[string][]*big.Rat{}
			}
			if reps[r.Task] == nil {
				reps[r.Task] = []*big.Rat{prev}
			}
			reps[r.Task] = append(reps[r.Task], v)
			continue
		}
		out[r.Task] = v
	}
	for t, vs := range reps {
		out[t] = MeanExact(vs)
	}
	x.exact[sel] = out
	return out, nil
}

// taskExactScaled is TaskExact for the common series whose values are all
// short decimals (m / 10^s, m below 10^15, read from the floats): each
// task's repetitions are summed as integers at one scale and only the
// task's mean becomes a rational. ok false: a value is not such a decimal,
// or a sum would overflow; TaskExact then works in rationals.
func (x *Index) taskExactScaled(idx []int32) (map[string]*big.Rat, bool) {
	type acc struct {
		sum   int64
		scale int
		n     int64
	}
	// Per task id, this call's stamp and its accumulator's index: arrays
	// the size of the table's names, reused by every series.
	if len(x.slot) < x.t.Names() {
		x.slot, x.stamp = make([]int32, x.t.Names()), make([]int32, x.t.Names())
	}
	x.stampN++
	accs := make([]acc, 0, 64)
	var tasks []uint32
	for _, i := range idx {
		v, exact, _ := x.t.Value(int(i))
		if exact != nil {
			return nil, false
		}
		m, s, ok := shortDecimal(v)
		if !ok {
			return nil, false
		}
		task := x.t.Task(int(i))
		if x.stamp[task] != x.stampN {
			x.stamp[task], x.slot[task] = x.stampN, int32(len(accs))
			accs = append(accs, acc{scale: s})
			tasks = append(tasks, task)
		}
		a := &accs[x.slot[task]]
		for ; a.scale < s; a.scale++ {
			if a.sum > math.MaxInt64/10 || a.sum < math.MinInt64/10 {
				return nil, false
			}
			a.sum *= 10
		}
		for ; s < a.scale; s++ {
			m *= 10 // |m| < 10^15 and scale <= 15: no overflow before the sum check
		}
		if (m > 0 && a.sum > math.MaxInt64-m) || (m < 0 && a.sum < math.MinInt64-m) {
			return nil, false
		}
		a.sum += m
		a.n++
	}
	out := make(map[string]*big.Rat, len(accs))
	for k, task := range tasks {
		a := &accs[k]
		den := a.n
		for range a.scale {
			if den > math.MaxInt64/10 {
				return nil, false
			}
			den *= 10
		}
		k := [2]int64{a.sum, den}
		r, ok := x.rats[k]
		if !ok {
			r = new(big.Rat).SetFrac64(a.sum, den)
			x.rats[k] = r
		}
		out[x.t.Name(task)] = r
	}
	return out, true
}

// shortDecimal returns f as the decimal m / 10^s with the fewest decimals
// that reads back as f, when |m| < 10^15 and s <= 15: at that precision
// only one decimal of a scale rounds to f, so it is the shortest decimal
// that prints f (what FloatExact gives). ok false otherwise.
func shortDecimal(f float64) (m int64, s int, ok bool) {
	if f == 0 {
		return 0, 0, true
	}
	for s = 0; s <= 15; s++ {
		x := math.Round(f * pow10f[s])
		if math.Abs(x) >= 1e15 {
			return 0, 0, false
		}
		if x/pow10f[s] == f {
			return int64(x), s, true
		}
	}
	return 0, 0, false
}

var pow10f = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// WeightsExact are the weights as the decimals written.
func (w Weights) exact() [4]*big.Rat {
	return [4]*big.Rat{FloatExact(w.Mechanics), FloatExact(w.Depth), FloatExact(w.Visuals), FloatExact(w.Art)}
}

// OverallExact is Overall (Eq. 9) in rationals.
func OverallExact(m, d, v, a *big.Rat, build bool, w Weights) *big.Rat {
	if !build {
		return new(big.Rat)
	}
	ws := w.exact()
	s := new(big.Rat)
	for i, c := range []*big.Rat{m, d, v, a} {
		s.Add(s, new(big.Rat).Mul(ws[i], c))
	}
	if s.Sign() < 0 {
		return new(big.Rat)
	}
	if hundred := big.NewRat(100, 1); s.Cmp(hundred) > 0 {
		return hundred
	}
	return s
}

func sortStrings(s []string) { sort.Strings(s) }

// FormatFixed prints r with the given decimals, rounded once from the
// exact value, half to even (0.125 -> "0.12", 0.135 -> "0.14"), the rule
// strconv applies to a float's exact binary value. A value that rounds to
// zero prints unsigned: never "-0.00".
func FormatFixed(r *big.Rat, decimals int) string {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	num := new(big.Int).Mul(r.Num(), scale)
	q, rem := new(big.Int).QuoRem(num, r.Denom(), new(big.Int)) // truncated toward zero
	twice := new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2))
	if c := twice.Cmp(r.Denom()); c > 0 || c == 0 && q.Bit(0) == 1 {
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	neg := q.Sign() < 0
	digits := new(big.Int).Abs(q).String()
	if decimals > 0 {
		if len(digits) <= decimals {
			digits = strings.Repeat("0", decimals-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// FormatShortest prints an exact value as its decimal when it terminates
// within 40 significant digits (44.06, not 44.059999999999995;
// 1000000.000000000001 whole), else as the shortest decimal of its nearest
// float (1/3: 0.3333333333333333), or 17 significant digits beyond the
// float range; never "-0".
func FormatShortest(r *big.Rat) string {
	if r.Sign() == 0 {
		return "0"
	}
	if isTerminating(r) {
		if s := runrecord.DecimalString(r); len(strings.Trim(strings.NewReplacer("-", "", ".", "").Replace(s), "0")) <= 40 {
			return s
		}
	}
	if f := Float(r); f != 0 && !math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return new(big.Float).SetPrec(64).SetRat(r).Text('g', 17)
}

// isTerminating reports whether r has a finite decimal expansion.
func isTerminating(r *big.Rat) bool {
	d := new(big.Int).Set(r.Denom())
	var m big.Int
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		for m.Mod(d, bp).Sign() == 0 {
			d.Quo(d, bp)
		}
	}
	return d.Cmp(big.NewInt(1)) == 0
}
