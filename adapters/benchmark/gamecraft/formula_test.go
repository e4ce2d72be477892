package gamecraft

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestFormulaEval(t *testing.T) {
	vars := map[string]float64{"BUILD": 1, "M1": 1, "M2": 0.5, "D1": 0, "D2": 1, "x_1": 4}
	cases := []struct {
		src  string
		want float64
	}{
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"8 / 4 / 2", 1},
		{"1 - 2 - 3", -4},
		{"-M1 + 3", 2},
		{"--2", 2},
		{"2 * -M2", -1},
		{"(M1+M2)/2", 0.75},
		{"avg(M1, M2)", 0.75},
		{"avg(M1)", 1},
		{"avg(M1+M2, D1, D2)", 2.5 / 3},
		{"BUILD * (0.15*((M1+M2)/2) + 0.35*((D1+D2)/2))", 0.15*0.75 + 0.35*0.5},
		{"1.5e1 + .5", 15.5},
		{"x_1 / 2", 2},
	}
	for _, c := range cases {
		f, err := parseFormula(c.src)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		got, err := f.Eval(vars)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%q = %v, want %v", c.src, got, c.want)
		}
	}
}

func TestFormulaErrorsCarryPosition(t *testing.T) {
	cases := []struct {
		src     string
		pos     int
		message string
	}{
		{"1 + ", 4, "expected a number"},
		{"(M1 + 2", 7, `expected ")"`},
		{"M1 $ 2", 3, `unexpected "$"`},
		{"M1 M2", 3, `unexpected "M2"`},
		{"exp(M1)", 0, `unknown function "exp"`},
		{"avg()", 4, "expected a number"},
		{"avg(M1 M2)", 7, `expected "," or ")"`},
		{"1..2", 0, "bad number"},
		{"", 0, "end of formula"},
	}
	for _, c := range cases {
		_, err := parseFormula(c.src)
		var fe *FormulaError
		if !errors.As(err, &fe) {
			t.Fatalf("%q: want a FormulaError, got %v", c.src, err)
		}
		if fe.Pos != c.pos || !strings.Contains(fe.Msg, c.message) {
			t.Errorf("%q: got pos %d %q, want pos %d containing %q", c.src, fe.Pos, fe.Msg, c.pos, c.message)
		}
	}
}

func TestFormulaUnknownIdentifier(t *testing.T) {
	f, err := parseFormula("BUILD * (M1 + Q7)")
	if err != nil {
		t.Fatal(err)
	}
	err = f.CheckIdentifiers(map[string]bool{"BUILD": true, "M1": true})
	var fe *FormulaError
	if !errors.As(err, &fe) || fe.Pos != 14 || !strings.Contains(fe.Msg, `"Q7"`) {
		t.Fatalf("CheckIdentifiers: got %v, want Q7 at 14", err)
	}
	_, err = f.Eval(map[string]float64{"BUILD": 1, "M1": 1})
	if !errors.As(err, &fe) || fe.Pos != 14 {
		t.Fatalf("Eval: got %v, want unknown identifier at 14", err)
	}
	if got := strings.Join(f.Identifiers(), ","); got != "BUILD,M1,Q7" {
		t.Errorf("Identifiers = %s", got)
	}
	z, _ := parseFormula("1 / (M1 - M1)")
	if _, err := z.Eval(map[string]float64{"M1": 1}); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("division by zero: got %v", err)
	}
}
