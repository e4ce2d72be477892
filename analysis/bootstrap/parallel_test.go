package bootstrap

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// The resamples are spread over every core; the interval must not depend
// on how many there are.
func TestIntervalIdenticalForAnyGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]float64, 300)
	for i := range data {
		data[i] = []float64{rng.NormFloat64(), rng.Float64() * 100, rng.ExpFloat64()}
	}
	opt := Options{Resamples: 2000, Seed: 7}
	if 300*2000*3 < parallelWork {
		t.Fatal("test data too small to take the parallel path")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want []Interval
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		got, err := Percentile(data, opt)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
			continue
		}
		for j := range got {
			if got[j] != want[j] {
				t.Errorf("GOMAXPROCS=%d column %d: %+v, with 1: %+v", procs, j, got[j], want[j])
			}
		}
	}
}
