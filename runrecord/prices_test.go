package runrecord

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
)

func rat(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }

// Dollars are tokens times prices exactly: uncached input, cached input,
// non-reasoning output and reasoning each at their own price, reasoning at
// the output price unless set.
func TestPriceCostExact(t *testing.T) {
	p := Price{Input: rat("1.25"), CachedInput: rat("0.125"), Output: rat("10")}
	u := Usage{Input: 1_234_567, CachedInput: 200_000, Output: 98_765, Reasoning: 4_321}
	// (1234567-200000)*1.25 + 200000*0.125 + 98765*10 = 1293208.75 + 25000 + 987650, / 1e6
	want := rat("2.30585875")
	if got := p.Cost(u); got.Cmp(want) != 0 {
		t.Fatalf("cost %s, want %s", got.FloatString(12), want.FloatString(12))
	}
	p.Reasoning = rat("20")
	want.Add(want, rat("0.04321")) // 4321 more tokens at 10 more per million
	if got := p.Cost(u); got.Cmp(want) != 0 {
		t.Fatalf("with a reasoning price: %s, want %s", FormatUSD(got), FormatUSD(want))
	}
	if got := FormatUSD(p.Cost(u)); got != "2.34906875" {
		t.Errorf("FormatUSD = %s", got)
	}
	noCache := Price{Input: rat("3"), Output: rat("15")}
	if got := FormatUSD(noCache.Cost(Usage{Input: 10, CachedInput: 4, Output: 1})); got != "0.000045" {
		t.Errorf("cached input without a cached price is charged as input: %s", got)
	}
	if FormatUSD(rat("1/3")) != "0.333333333333" || FormatUSD(rat("0")) != "0" || FormatUSD(rat("12")) != "12" {
		t.Errorf("FormatUSD: %s %s %s", FormatUSD(rat("1/3")), FormatUSD(rat("0")), FormatUSD(rat("12")))
	}
}

func TestPricesLookupAndParse(t *testing.T) {
	ps := Prices{"openai/gpt-x": {Input: rat("1")}, "gpt-x": {Input: rat("2")}, "m": {Input: rat("3")}}
	if p, ok := ps.Lookup("openai", "gpt-x"); !ok || p.Input.Cmp(rat("1")) != 0 {
		t.Error("provider/model first")
	}
	if p, ok := ps.Lookup("azure", "gpt-x"); !ok || p.Input.Cmp(rat("2")) != 0 {
		t.Error("then model")
	}
	if _, ok := ps.Lookup("x", "unknown"); ok {
		t.Error("an unknown model has no price")
	}
	for _, bad := range []string{"", "-1", "0x10", "1/3", "Inf", "1_0"} {
		if _, err := ParseUSD(bad); err == nil {
			t.Errorf("ParseUSD(%q) accepted", bad)
		}
	}
	if r, err := ParseUSD("0.1"); err != nil || r.Cmp(big.NewRat(1, 10)) != 0 {
		t.Errorf("ParseUSD(0.1) = %v %v: exactly a tenth", r, err)
	}
}

// cost_usd is an optional column: written only when a row has a cost, read
// back exactly, and an empty cell is an unknown cost, not 0.
func TestScoresCostColumn(t *testing.T) {
	rows := []Row{
		{Benchmark: "b", Config: "c", Condition: Vanilla, Checkpoint: 1, Task: "t1", Metric: "m", Value: 1, Tokens: 10, Rep: 1, CostUSD: rat("0.000123")},
		{Benchmark: "b", Config: "c", Condition: Vanilla, Checkpoint: 1, Task: "t2", Metric: "m", Value: 0, Tokens: 10, Rep: 1},
	}
	var buf bytes.Buffer
	if err := EncodeScores(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.SplitN(buf.String(), "\n", 2)[0], ",cost_usd") || !strings.Contains(buf.String(), ",0.000123\n") {
		t.Fatalf("encoded:\n%s", buf.String())
	}
	back, err := DecodeScores(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back[0].CostUSD.Cmp(rat("0.000123")) != 0 || back[1].CostUSD != nil {
		t.Errorf("read back %v %v", back[0].CostUSD, back[1].CostUSD)
	}
	buf.Reset()
	_ = EncodeScores(&buf, rows[1:])
	if strings.Contains(buf.String(), "cost_usd") {
		t.Errorf("a file without costs got the column:\n%s", buf.String())
	}
	if _, err := DecodeScores(strings.NewReader("benchmark,config,condition,checkpoint,task,metric,value,cost_usd\nb,c,vanilla,1,t,m,1,-2\n")); err == nil || !strings.Contains(err.Error(), "line 2: cost_usd") {
		t.Errorf("a negative cost: %v", err)
	}
}
