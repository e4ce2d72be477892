package tables

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// writePlainGrid draws exactly what tablewriter draws, on every chunk of
// the paper tables whose cells are plain and on random plain cells (empty
// cells and headers, inner spaces, odd and even centring, one column).
func TestPlainGridMatchesTableWriter(t *testing.T) {
	same := func(head []string, body [][]string) {
		t.Helper()
		var plain, tw bytes.Buffer
		if err := writePlainGrid(&plain, head, body); err != nil {
			t.Fatal(err)
		}
		if err := tableWriterGrid(&tw, head, body, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(plain.Bytes(), tw.Bytes()) {
			t.Fatalf("head %q rows %q:\nplain:\n%s\ntablewriter:\n%s", head, body, plain.String(), tw.String())
		}
	}
	compared := 0
	for _, name := range Names {
		for _, tb := range paperTables(t, name) {
			rows := gridRows(tb)
			for _, cols := range columnChunks(tb.Columns, rows, TextWidth) {
				head := []string{""}
				for _, j := range cols {
					head = append(head, tb.Columns[j])
				}
				var body [][]string
				for _, full := range rows {
					r := []string{full[0]}
					for _, j := range cols {
						r = append(r, full[j+1])
					}
					body = append(body, r)
				}
				if plainCells(head, body) {
					same(head, body)
					compared++
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no paper table chunk is plain: the test no longer covers real tables")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cell := func() string {
		const alphabet = "ab1.-+[]|*@x_\\%&<#~ "
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(bytes.Trim(b, " "))
	}
	for range 500 {
		cols := 1 + rng.IntN(5)
		head := make([]string, cols)
		for j := range head {
			head[j] = cell()
		}
		body := make([][]string, 1+rng.IntN(4))
		for i := range body {
			body[i] = make([]string, cols)
			for j := range body[i] {
				body[i][j] = cell()
			}
		}
		if plainCells(head, body) {
			same(head, body)
		}
	}
}

func TestPlainCellsLeavesOthersToTableWriter(t *testing.T) {
	for _, c := range []string{" lead", "trail ", "x ≠ y", "a\nb", "tab\there", "日本"} {
		if plainCells([]string{"", "h"}, [][]string{{"l", c}}) {
			t.Errorf("%q counted plain", c)
		}
	}
	if plainCells([]string{"", "h"}, nil) {
		t.Error("a grid without rows counted plain")
	}
	if !plainCells([]string{"", "h"}, [][]string{{"task-1", "55.86"}, {"Action", ""}}) {
		t.Error("plain cells refused")
	}
}
