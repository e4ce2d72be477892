package roles

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// A verified claim is backed by the QA Tester's tool log when its execution
// records correspond to commands its CLI reported executing. Correspondence,
// after normalising both sides (normaliseCommand): the record's command equals
// an executed command, or equals one of the simple commands an executed
// command line is made of (split at &&, ||, ;, | and newlines). So a record
// "sh greet.sh Ada" is backed by Codex's "/bin/bash -lc 'sh greet.sh Ada'"
// and by "cd /w && sh greet.sh Ada", but not by "sh greet.sh" or by nothing.
//
// Its observation must then be found in what the CLI recorded that command
// printing (observed): after removing terminal escape sequences and
// collapsing every run of whitespace to one space on both sides, the whole
// observation is a substring of the output of one of the corresponding
// executed commands, or, when the observation quotes (in "double quotes" or
// `backticks`), every quoted part is. So "Hello, Ada!" and `prints "Hello,
// Ada!"` are backed by the output "Hello,   Ada!\n" but not by "Hi Ada"; a
// command whose CLI recorded no output (Output nil) is not checked.

// Execution is one shell command a QA invocation's CLI reported running and
// what it recorded the command printing (nil: nothing recorded).
type Execution struct {
	Command string
	Output  *string
}

// Commands makes executions without recorded outputs.
func Commands(cmds ...string) []Execution {
	out := make([]Execution, len(cmds))
	for i, c := range cmds {
		out[i] = Execution{Command: c}
	}
	return out
}

// commandRan reports whether recorded corresponds to one of executed.
func commandRan(recorded string, executed []string) bool {
	return len(ran(recorded, Commands(executed...))) > 0
}

// ran returns the executions recorded corresponds to.
func ran(recorded string, executed []Execution) []Execution {
	want := normaliseCommand(recorded)
	if want == "" {
		return nil
	}
	var match []Execution
	for _, e := range executed {
		got := normaliseCommand(e.Command)
		if got == want || slices.Contains(segments(got), want) {
			match = append(match, e)
		}
	}
	return match
}

// observed reports whether observation is found in the output of one of
// runs (see above); true when none of them has a recorded output.
func observed(observation string, runs []Execution) bool {
	want := observationParts(observation)
	logged := false
	for _, r := range runs {
		if r.Output == nil {
			continue
		}
		logged = true
		out := collapse(ansi.ReplaceAllString(*r.Output, ""))
		found := true
		for _, w := range want {
			found = found && strings.Contains(out, w)
		}
		if found {
			return true
		}
	}
	return !logged
}

var (
	ansi   = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
	quoted = regexp.MustCompile("\"([^\"]+)\"|`([^`]+)`")
)

// observationParts are the texts an observation requires: its quoted parts,
// or the whole of it.
func observationParts(observation string) []string {
	var parts []string
	for _, m := range quoted.FindAllStringSubmatch(observation, -1) {
		if p := collapse(m[1] + m[2]); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		parts = []string{collapse(ansi.ReplaceAllString(observation, ""))}
	}
	return parts
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
