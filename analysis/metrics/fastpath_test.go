package metrics

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// shortDecimal gives the value FloatExact gives (the shortest decimal that
// prints the float), for every float it takes; it refuses what it cannot.
func TestShortDecimalIsFloatExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(f float64) {
		m, s, ok := shortDecimal(f)
		if !ok {
			return
		}
		got := new(big.Rat).SetFrac(big.NewInt(m), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
		if want := FloatExact(f); got.Cmp(want) != 0 {
			t.Fatalf("%v: %v, want %v", f, got, want)
		}
	}
	taken := 0
	for range 200000 {
		// Short decimals as records hold them, and arbitrary floats.
		d := float64(rng.Int64N(1_000_000_000)) / math.Pow(10, float64(rng.IntN(10)))
		if _, _, ok := shortDecimal(d); ok {
			taken++
		}
		check(d)
		check(-d)
		check(math.Float64frombits(rng.Uint64()))
		check(rng.Float64() * 100)
	}
	if taken < 190000 {
		t.Errorf("only %d of 200000 short decimals took the fast path", taken)
	}
	for _, f := range []float64{1e20, 1e-20, math.MaxFloat64, 0.1 + 0.2} {
		if m, s, ok := shortDecimal(f); ok && f != 0.1+0.2 {
			t.Errorf("%v taken as %d/10^%d", f, m, s)
		}
		check(f)
	}
}

// MeanExact's int64 path equals the rational sum, and falls back when a
// term does not fit.
func TestMeanInt64MatchesRationals(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ratMean := func(vs []*big.Rat) *big.Rat {
		sum := new(big.Rat)
		for _, v := range vs {
			sum.Add(sum, v)
		}
		return sum.Quo(sum, big.NewRat(int64(len(vs)), 1))
	}
	for range 2000 {
		var vs []*big.Rat
		for range 1 + rng.IntN(50) {
			den := int64(1 + rng.IntN(10))
			for range rng.IntN(6) {
				den *= 10
			}
			vs = append(vs, big.NewRat(rng.Int64N(2_000_000)-1_000_000, den))
		}
		got, ok := meanInt64(vs)
		if !ok || got.Cmp(ratMean(vs)) != 0 {
			t.Fatalf("%v: %v (ok %v), want %v", vs, got, ok, ratMean(vs))
		}
	}
	huge, _ := new(big.Rat).SetString("1" + strconv.Itoa(0) + "000000000000000000000/3")
	vs := []*big.Rat{huge, big.NewRat(math.MaxInt64, 7), big.NewRat(1, 1<<62)}
	if _, ok := meanInt64(vs); ok {
		t.Error("an overflowing mean took the int64 path")
	}
	if MeanExact(vs).Cmp(ratMean(vs)) != 0 {
		t.Error("MeanExact's fallback is not the rational mean")
	}
}
