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

// TaskTokensExact is TaskTokens with each task's mean over repetitions
// exact. It is computed once per arm (Tables 2 and 3 ask for an arm's
// tokens in several columns and for Vanilla's beside every arm); the map is
// shared: do not modify it.
func (x *Index) TaskTokensExact(sel Selector) (map[string]*big.Rat, error) {
	k := armKey{sel.Benchmark, sel.Config, sel.Arm}
	c, ok := x.tokens[k]
	if !ok {
		c.tok, c.err = x.taskTokensExact(sel)
		x.tokens[k] = c
	}
	return c.tok, c.err
}

// armTokens is an arm's TaskTokensExact and its Eq. 11 mean (nil until
// asked for).
type armTokens struct {
	tok  map[string]*big.Rat
	err  error
	mean *Summary
}

// tokenTrial is one (task, rep) of an arm.
type tokenTrial struct {
	task uint32
	rep  int32
}

// trialTokens is a trial's tokens, has false while no row gave them.
type trialTokens struct {
	tokens float64
	has    bool
}

// taskTokenSum is a task's repetitions with and without tokens and their
// sum, in int64 while every count is an integer float (what FloatExact
// reads it as), else exactly.
type taskTokenSum struct {
	with, without int
	sum           int64
	exact         *big.Rat
}

func (x *Index) taskTokensExact(sel Selector) (map[string]*big.Rat, error) {
	rows := x.armRows(sel)
	if len(rows) == 0 {
		return nil, fmt.Errorf("metrics: no rows for %s/%s/%s", sel.Benchmark, sel.Config, sel.Arm)
	}
	trials, counts, err := x.trialTokens(sel, rows)
	if err != nil {
		return nil, err
	}
	of, order := sumTaskTokens(trials, counts)
	return x.meanTaskTokens(sel, of, order)
}

// trialTokens is the arm's trials in order of first appearance with each
// one's tokens, refusing a trial whose rows disagree on them.
func (x *Index) trialTokens(sel Selector, rows []int32) ([]tokenTrial, []trialTokens, error) {
	// A trial's rows (one per metric) are mostly adjacent: the map is
	// consulted only where the (task, rep) changes.
	t := x.t
	at := map[tokenTrial]int{}
	var trials []tokenTrial
	var counts []trialTokens
	last := -1
	for _, i := range rows {
		k := tokenTrial{t.Task(int(i)), t.Rep(int(i))}
		if last < 0 || trials[last] != k {
			j, ok := at[k]
			if !ok {
				j = len(trials)
				at[k] = j
				trials, counts = append(trials, k), append(counts, trialTokens{})
			}
			last = j
		}
		v := t.Tokens(int(i))
		if math.IsNaN(v) {
			continue
		}
		c := &counts[last]
		if c.has && c.tokens != v {
			return nil, nil, fmt.Errorf("metrics: %s/%s/%s task %s rep %d: rows disagree on tokens (%g and %g)",
				sel.Benchmark, sel.Config, sel.Arm, t.Name(trials[last].task), trials[last].rep, c.tokens, v)
		}
		c.tokens, c.has = v, true
	}
	return trials, counts, nil
}

// sumTaskTokens sums the trials' tokens per task, the tasks in order of
// first appearance.
func sumTaskTokens(trials []tokenTrial, counts []trialTokens) (map[uint32]*taskTokenSum, []uint32) {
	of := map[uint32]*taskTokenSum{}
	var order []uint32
	for n, k := range trials {
		tk := of[k.task]
		if tk == nil {
			tk = &taskTokenSum{}
			of[k.task] = tk
			order = append(order, k.task)
		}
		c := counts[n]
		if !c.has {
			tk.without++
			continue
		}
		tk.with++
		if tk.exact == nil && c.tokens == math.Trunc(c.tokens) && math.Abs(c.tokens) < exactInt && math.Abs(float64(tk.sum)) < 1<<62 {
			tk.sum += int64(c.tokens)
			continue
		}
		if tk.exact == nil {
			tk.exact = new(big.Rat).SetInt64(tk.sum)
		}
		tk.exact.Add(tk.exact, FloatExact(c.tokens))
	}
	return of, order
}

// meanTaskTokens is each task's mean tokens by name, refusing tasks with
// tokens on only some repetitions, or an arm where only some tasks have them.
func (x *Index) meanTaskTokens(sel Selector, of map[uint32]*taskTokenSum, order []uint32) (map[string]*big.Rat, error) {
	t := x.t
	sum := map[string]*big.Rat{}
	var lacking []string
	for _, id := range order {
		tk, name := of[id], t.Name(id)
		switch {
		case tk.with == 0:
			lacking = append(lacking, name)
		case tk.without > 0:
			return nil, fmt.Errorf("metrics: %s/%s/%s task %s: %d repetitions have tokens and %d do not",
				sel.Benchmark, sel.Config, sel.Arm, name, tk.with, tk.without)
		case tk.exact != nil:
			sum[name] = tk.exact.Quo(tk.exact, new(big.Rat).SetInt64(int64(tk.with)))
		default:
			sum[name] = new(big.Rat).SetFrac64(tk.sum, int64(tk.with))
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
	k := armKey{sel.Benchmark, sel.Config, sel.Arm}
	c := x.tokens[k]
	if c.mean == nil {
		million := big.NewRat(1, 1_000_000)
		m := make(map[string]*big.Rat, len(tok))
		for t, v := range tok {
			m[t] = new(big.Rat).Mul(v, million)
		}
		s, err := SummarizeExact(m)
		if err != nil {
			return s, err
		}
		c.mean = &s
		x.tokens[k] = c
	}
	s := *c.mean
	s.Exact = new(big.Rat).Set(s.Exact) // the caller's own
	return s, nil
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
