package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
)

// ErrNoTokens reports that no task of an arm carries a token count.
var ErrNoTokens = errors.New("no token counts")

// TaskTokens returns task -> cumulative tokens (raw count, input + output)
// for the trials of sel's arm (sel.Metric is ignored: every metric row of a
// trial carries the same count). Repetitions are averaged per task. Tasks
// without tokens are absent; a task whose repetitions disagree on having
// tokens, or a trial whose rows disagree on the count, is an error.
func (x *Index) TaskTokens(sel Selector) (map[string]float64, error) {
	ex, err := x.TaskTokensExact(sel)
	if err != nil {
		return nil, err
	}
	return Floats(ex), nil
}

// TaskTokensExact is TaskTokens with each task's mean over repetitions exact.
func (x *Index) TaskTokensExact(sel Selector) (map[string]*big.Rat, error) {
	type trial struct {
		task string
		rep  int
	}
	tok := map[trial]float64{}
	seen := map[trial]bool{}
	for _, i := range x.armRows(sel) {
		r := x.row(i)
		k := trial{r.Task, r.Rep}
		seen[k] = true
		if !r.HasTokens() {
			continue
		}
		if prev, ok := tok[k]; ok && prev != r.Tokens {
			return nil, fmt.Errorf("metrics: %s/%s/%s task %s rep %d: rows disagree on tokens (%g and %g)",
				sel.Benchmark, sel.Config, sel.Arm, r.Task, r.Rep, prev, r.Tokens)
		}
		tok[k] = r.Tokens
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("metrics: no rows for %s/%s/%s", sel.Benchmark, sel.Config, sel.Arm)
	}
	sum := map[string]*big.Rat{}
	with := map[string]int{}
	without := map[string]int{}
	for k := range seen {
		if v, ok := tok[k]; ok {
			if sum[k.task] == nil {
				sum[k.task] = new(big.Rat)
			}
			sum[k.task].Add(sum[k.task], FloatExact(v))
			with[k.task]++
		} else {
			without[k.task]++
		}
	}
	for t := range sum {
		if without[t] > 0 {
			return nil, fmt.Errorf("metrics: %s/%s/%s task %s: %d repetitions have tokens and %d do not",
				sel.Benchmark, sel.Config, sel.Arm, t, with[t], without[t])
		}
		sum[t].Quo(sum[t], new(big.Rat).SetInt64(int64(with[t])))
	}
	var lacking []string
	for t := range without {
		if with[t] == 0 {
			lacking = append(lacking, t)
		}
	}
	if len(sum) > 0 && len(lacking) > 0 {
		sort.Strings(lacking)
		return nil, fmt.Errorf("metrics: %s/%s/%s: %d tasks have tokens but %s lack them",
			sel.Benchmark, sel.Config, sel.Arm, len(sum), strings.Join(lacking, ", "))
	}
	return sum, nil
}

// MeanTokensMillions is Eq. 11: the unweighted task mean of cumulative tokens
// in millions. An arm with no tokens at all returns an error wrapping
// ErrNoTokens; an arm where only some tasks have tokens is an error naming
// the tasks that lack them.
func (x *Index) MeanTokensMillions(sel Selector) (Summary, error) {
	tok, err := x.TaskTokensExact(sel)
	if err != nil {
		return Summary{}, err
	}
	if len(tok) == 0 {
		return Summary{}, fmt.Errorf("metrics: %s/%s/%s: %w", sel.Benchmark, sel.Config, sel.Arm, ErrNoTokens)
	}
	million := big.NewRat(1, 1_000_000)
	m := make(map[string]*big.Rat, len(tok))
	for t, v := range tok {
		m[t] = new(big.Rat).Mul(v, million)
	}
	return SummarizeExact(m)
}

// UndefinedError says why eta (Eq. 12) has no value.
type UndefinedError struct{ Reason string }

func (e *UndefinedError) Error() string { return "eta undefined: " + e.Reason }

// Eta is Eq. 12: (score(c) - score(Vanilla)) / (tokens(c) - tokens(Vanilla)),
// score gained per additional million tokens. Tokens are mean millions per
// task; NaN tokens mean unknown. It returns an *UndefinedError when tokens
// are missing or their difference is zero.
func Eta(score, vanillaScore, tokensM, vanillaTokensM float64) (float64, error) {
	switch {
	case math.IsNaN(tokensM) && math.IsNaN(vanillaTokensM):
		return math.NaN(), &UndefinedError{"tokens missing for both arms"}
	case math.IsNaN(tokensM):
		return math.NaN(), &UndefinedError{"tokens missing for the compared arm"}
	case math.IsNaN(vanillaTokensM):
		return math.NaN(), &UndefinedError{"tokens missing for Vanilla"}
	case tokensM == vanillaTokensM:
		return math.NaN(), &UndefinedError{"token difference is zero"}
	}
	return (score - vanillaScore) / (tokensM - vanillaTokensM), nil
}

// Efficiency is eta with the differences it divides.
type Efficiency struct {
	ScoreDelta  float64 // mean score(c) - mean score(Vanilla)
	TokensDelta float64 // mean tokens(c) - mean tokens(Vanilla), millions
	Eta         float64 // ScoreDelta / TokensDelta
	// EtaExact is eta in rationals, from the exact means (Eta is its
	// nearest float): with scores of 1e-12 and ±1e6 a float sum loses the
	// small mean and can flip eta's sign.
	EtaExact *big.Rat
}

// Efficiency computes Eq. 12 for the treated arm against the vanilla arm:
// scores are the task means of each selector's metric, tokens the task means
// of Eq. 11 over the same arms. An arm without tokens gives an
// *UndefinedError; partially missing tokens or missing rows give plain errors.
func (x *Index) Efficiency(treated, vanilla Selector) (Efficiency, error) {
	var e Efficiency
	mean := func(sel Selector) (*big.Rat, error) {
		v, err := x.TaskExact(sel)
		if err != nil {
			return nil, err
		}
		s, err := SummarizeExact(v)
		return s.Exact, err
	}
	tokens := func(sel Selector) (*big.Rat, error) {
		s, err := x.MeanTokensMillions(sel)
		if errors.Is(err, ErrNoTokens) {
			return nil, nil
		}
		return s.Exact, err
	}
	sc, err := mean(treated)
	if err != nil {
		return e, err
	}
	sv, err := mean(vanilla)
	if err != nil {
		return e, err
	}
	tc, err := tokens(treated)
	if err != nil {
		return e, err
	}
	tv, err := tokens(vanilla)
	if err != nil {
		return e, err
	}
	ds := new(big.Rat).Sub(sc, sv)
	e.ScoreDelta, e.TokensDelta = Float(ds), math.NaN()
	nan := func(r *big.Rat) float64 {
		if r == nil {
			return math.NaN()
		}
		return Float(r)
	}
	if tc != nil && tv != nil {
		dt := new(big.Rat).Sub(tc, tv)
		e.TokensDelta = Float(dt)
		if dt.Sign() != 0 {
			e.EtaExact = new(big.Rat).Quo(ds, dt)
			e.Eta = Float(e.EtaExact)
			return e, nil
		}
	}
	e.Eta, err = Eta(Float(sc), Float(sv), nan(tc), nan(tv))
	if err == nil { // equal in floats, unequal exactly: cannot happen above; keep Eta's reasons
		err = &UndefinedError{"token difference is zero"}
	}
	return e, err
}
