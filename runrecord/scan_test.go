package runrecord

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The decoder splits lines itself until one holds a quote, then hands the
// rest to encoding/csv: both give the same rows, and lines are counted the
// same (comments, blank lines, CRLF, a final line without a newline).
func TestFastAndCSVPathsAgree(t *testing.T) {
	body := "# a comment\r\n" +
		"b,c1,hoh,1,t1,fam,Action,,overall,12.5,1000,1,s1\r\n" +
		"\r\n" +
		"b,c1,hoh,1,t2,fam,Action,,overall,-0,1000,1,s1\n" +
		"# another\n" +
		"b,c1,vanilla,1,t1,fam,Action,,overall,1e-400,2000,2,s2\n" +
		"b, c2 ,hoh,2,t1,fam,Action,,overall,1000000.000000000001,,1,s3"
	head := strings.Join(ScoreColumns, ",") + "\n"
	fast, err := DecodeScores(strings.NewReader(head + body))
	if err != nil {
		t.Fatal(err)
	}
	// The same records with a quoted field first: the csv path from line 2.
	quoted := strings.Replace(body, "b,c1,hoh,1,t1,", `"b",c1,hoh,1,t1,`, 1)
	slow, err := DecodeScores(strings.NewReader(head + quoted))
	if err != nil {
		t.Fatal(err)
	}
	if len(fast) != 4 || !reflect.DeepEqual(noNaN(fast), noNaN(slow)) {
		t.Fatalf("fast %+v\nslow %+v", fast, slow)
	}
	if fast[3].Config != "c2" || fast[1].Value != 0 || fast[3].Exact == nil || !fast[2].HasTokens() || fast[3].HasTokens() {
		t.Errorf("rows %+v", fast)
	}
	// Errors name the same line on either path.
	for _, b := range []string{body, quoted} {
		bad := strings.Replace(b, "1e-400", "x", 1)
		_, err := DecodeScores(strings.NewReader(head + bad))
		if err == nil || !strings.Contains(err.Error(), "line 7:") {
			t.Errorf("error %v, want line 7", err)
		}
	}
	// RecordLine finds a record's line again.
	p := filepath.Join(t.TempDir(), "s.csv")
	os.WriteFile(p, []byte(head+body), 0o644)
	for k, want := range []int{3, 5, 7, 8} {
		if got := RecordLine(p, k); got != want {
			t.Errorf("record %d: line %d, want %d", k, got, want)
		}
	}
}

// parseShortDecimal is the float strconv reads, for every decimal it takes.
func TestShortDecimalsReadAsStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		digits := 1 + rng.IntN(15)
		m := rng.Int64N(pow10i64(digits))
		frac := rng.IntN(min(digits, 22) + 1)
		s := strconv.FormatInt(m, 10)
		for len(s) < frac+1 {
			s = "0" + s
		}
		if frac > 0 {
			s = s[:len(s)-frac] + "." + s[len(s)-frac:]
		}
		if rng.IntN(2) == 0 {
			s = "-" + s
		}
		got, ok := parseShortDecimal([]byte(s))
		want, _, err := parseDecimal("value", s)
		if !ok || err != nil || got != want {
			t.Fatalf("%s: %v %v, want %v (%v)", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"", "-", ".", "1e5", "1.2.3", "0x10", "1234567890123456", "1_0", "+", "Inf"} {
		if _, ok := parseShortDecimal([]byte(s)); ok {
			t.Errorf("%q taken by the short path", s)
		}
	}
}

func pow10i64(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// A table keeps every field of a row, and groups rows by series and arm in
// order of first appearance.
func TestScoreTableRoundTripAndGroups(t *testing.T) {
	var rows []Row
	for i := range 30 {
		rows = append(rows, Row{Benchmark: "b", Config: fmt.Sprint("c", i%2), Condition: HoH, Checkpoint: 1 + i%3, Task: fmt.Sprint("t", i),
			Family: "f", Group: fmt.Sprint("g", i%4), Metric: fmt.Sprint("m", i%5), Value: float64(i) / 4, Tokens: float64(i), Rep: 1, Source: "s"})
	}
	rows[7].CostUSD, _ = ParseUSD("0.25")
	rows[8].Exact, rows[8].Value = ratOf("1000000000000000001/1000000000000"), 1e6
	tb := NewScoreTable(0)
	for _, r := range rows {
		tb.Append(r)
	}
	if got := tb.Rows(); !reflect.DeepEqual(noNaN(got), noNaN(rows)) {
		t.Fatalf("round trip:\n%+v\n%+v", got, rows)
	}
	gs := tb.GroupRows(tb.NumSeries(), func(i int) (uint32, bool) { return tb.SeriesID(i), i%10 != 9 })
	seen := 0
	for g, id := range gs.Keys {
		prev := int32(-1)
		for _, i := range gs.Of(g) {
			if tb.SeriesID(int(i)) != id || i <= prev || i%10 == 9 {
				t.Fatalf("group %d holds row %d", g, i)
			}
			prev = i
			seen++
		}
		if g > 0 && gs.Of(g)[0] < gs.Of(g - 1)[0] {
			t.Errorf("groups not in order of first appearance")
		}
	}
	if seen != 27 {
		t.Errorf("%d rows grouped, want 27", seen)
	}
}

func ratOf(s string) *big.Rat {
	r, _ := new(big.Rat).SetString(s)
	return r
}

// noNaN makes unknown tokens comparable (NaN is not equal to itself).
func noNaN(rows []Row) []Row {
	out := append([]Row(nil), rows...)
	for i := range out {
		if !out[i].HasTokens() {
			out[i].Tokens = -1
		}
	}
	return out
}
