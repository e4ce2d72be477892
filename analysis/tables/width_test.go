package tables

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// The text format of every paper table fits a 120-column terminal: tables
// are split into parts, and the legend, notes and comparisons are wrapped
// (a single word wider than that, none here, would stay whole).
func TestTextFitsTheTerminal(t *testing.T) {
	for _, name := range Names {
		var out bytes.Buffer
		if err := renderGrid(&out, paperTables(t, name), false); err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > TextWidth {
				t.Errorf("%s line %d is %d columns: %s", name, i+1, n, line)
			}
		}
		if !strings.Contains(out.String(), "\n  ") {
			t.Errorf("%s: nothing was wrapped; the test no longer covers the prose", name)
		}
	}
}
