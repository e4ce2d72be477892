package roles

import (
	"path"
	"strings"
)

// A verified claim is backed by the QA Tester's tool log when its execution
// records correspond to commands its CLI reported executing. Correspondence,
// after normalising both sides (normaliseCommand): the record's command equals
// an executed command, or equals one of the simple commands an executed
// command line is made of (split at &&, ||, ;, | and newlines). So a record
// "sh greet.sh Ada" is backed by Codex's "/bin/bash -lc 'sh greet.sh Ada'"
// and by "cd /w && sh greet.sh Ada", but not by "sh greet.sh" or by nothing.

// commandRan reports whether recorded corresponds to one of executed.
func commandRan(recorded string, executed []string) bool {
	want := normaliseCommand(recorded)
	if want == "" {
		return false
	}
	for _, e := range executed {
		got := normaliseCommand(e)
		if got == want {
			return true
		}
		for _, seg := range segments(got) {
			if seg == want {
				return true
			}
		}
	}
	return false
}

// normaliseCommand removes shell wrappers (sh/bash/zsh/dash -c or -lc 'X',
// any number of them, with their quoting undone) and collapses whitespace.
func normaliseCommand(s string) string {
	s = strings.TrimSpace(s)
	for range 4 {
		w, ok := shellWords(s)
		if !ok || len(w) < 3 {
			break
		}
		switch path.Base(w[0]) {
		case "sh", "bash", "zsh", "dash":
		default:
			return collapse(s)
		}
		if !strings.HasPrefix(w[1], "-") || !strings.Contains(w[1], "c") {
			break
		}
		s = strings.TrimSpace(w[2])
	}
	return collapse(s)
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// segments splits a command line at the shell's list and pipe operators.
// Quoting is not honoured: a split inside quotes only adds segments that
// match nothing a record would name.
func segments(s string) []string {
	f := func(r rune) bool { return r == ';' || r == '&' || r == '|' || r == '\n' }
	var out []string
	for _, p := range strings.FieldsFunc(s, f) {
		if p = collapse(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// shellWords splits a command line into words as a POSIX shell would for
// plain words, single quotes, double quotes and backslashes (no expansion).
// ok is false for an unterminated quote.
func shellWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
