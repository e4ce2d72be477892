package trial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// What an ordinary agent leaves beside a correct greet.sh never turns the
// trial into a harness failure: the trial completes, the checkpoint gets
// its true score (the hidden tests pass) and holds the files, and the live
// workspace keeps what the agent made.
func TestWhatTheDeveloperLeavesIsRecordedAndScored(t *testing.T) {
	const agentGit = "git -c user.name=a -c user.email=a@x -c init.defaultBranch=main -c protocol.file.allow=always "
	cases := []struct {
		name  string
		shell string
		// inCheckpoint: path in cp-1 and its content.
		inCheckpoint map[string]string
		// onDisk: a path the live workspace still has.
		onDisk    string
		violation string
	}{
		{name: "nested repository (git init sub)",
			shell:        "git init -q sub && echo 'x = 1' > sub/lib.py",
			inCheckpoint: map[string]string{"sub/lib.py": "x = 1\n"}, onDisk: "sub/.git/HEAD"},
		{name: "nested repository with commits",
			shell:        "git init -q sub && cd sub && echo 'x = 1' > lib.py && " + agentGit + "add lib.py && " + agentGit + "commit -qm lib",
			inCheckpoint: map[string]string{"sub/lib.py": "x = 1\n"}, onDisk: "sub/.git/HEAD"},
		// The evaluator scores 100 only if its export holds the nested file.
		{name: "the implementation inside a nested repository",
			shell: `git init -q impl && printf 'if [ $# -eq 0 ]; then echo "Hello, World!"; else echo "Hello, $*!"; fi\n' > impl/greet.sh && ` +
				`printf '#!/bin/sh\n. "$(dirname "$0")/impl/greet.sh"\n' > greet.sh`,
			inCheckpoint: map[string]string{"greet.sh": "#!/bin/sh\n. \"$(dirname \"$0\")/impl/greet.sh\"\n"}, onDisk: "impl/.git/HEAD"},
		{name: "submodule",
			shell: agentGit + "init -q up && echo 'int v;' > up/v.c && " + agentGit + "-C up add v.c && " + agentGit + "-C up commit -qm up && " +
				agentGit + "init -q && " + agentGit + "submodule --quiet add ./up third_party/up",
			inCheckpoint: map[string]string{"third_party/up/v.c": "int v;\n", "up/v.c": "int v;\n"}, onDisk: ".gitmodules"},
		{name: "ignored build output (and an ignore-everything .gitignore)",
			shell:        "printf '*\\n' > .gitignore && mkdir -p build && echo built > build/app.o",
			inCheckpoint: map[string]string{"build/app.o": "built\n", ".gitignore": "*\n"}},
		{name: "a name with a newline, one with bad UTF-8, one with a leading dash",
			shell:        `printf nl > "$(printf 'new\nline')" && printf bad > "$(printf 'b\377d')" && printf dash > ./-rf`,
			inCheckpoint: map[string]string{"new\nline": "nl", "b\xffd": "bad", "-rf": "dash"}},
		{name: "a name git cannot hold",
			shell:        "mkdir -p d/.GIT && echo x > d/.GIT/config && echo k > d/keep",
			inCheckpoint: map[string]string{"d/keep": "k\n"}, onDisk: "d/.GIT/config", violation: `"d/.GIT": git cannot hold`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &fakeHarness{devShell: c.shell}
			s, dir := runTrial(t, "hoh@1", h)
			if h.devShellErr != nil {
				t.Fatalf("the Developer's shell step failed: %v", h.devShellErr)
			}
			if s.Status != runrecord.StatusCompleted || len(s.Checkpoints) != 1 {
				t.Fatalf("trial %s (%s), %d checkpoints", s.Status, s.Reason, len(s.Checkpoints))
			}
			if got := s.Checkpoints[0].Metrics["pass_rate"]; got != 100 {
				t.Errorf("pass_rate %v, want 100 (greet.sh is correct)", got)
			}
			l := runrecord.TrialLayout{Dir: dir}
			for rel, want := range c.inCheckpoint {
				if got := testenv.GitShow(t, l.GitDir(), "cp-1:"+rel); got != want {
					t.Errorf("cp-1:%q = %q, want %q", rel, got, want)
				}
			}
			if c.onDisk != "" {
				if _, err := os.Stat(filepath.Join(l.Workspace(), c.onDisk)); err != nil {
					t.Errorf("the workspace lost %s: %v", c.onDisk, err)
				}
			}
			got := strings.Join(s.Violations, "\n")
			if c.violation == "" && got != "" {
				t.Errorf("violations %q", s.Violations)
			}
			if c.violation != "" && !strings.Contains(got, c.violation) {
				t.Errorf("violations %q lack %s", s.Violations, c.violation)
			}
			// Left by the Developer, not again by the QA Tester, whose stage
			// left the workspace as the Developer's commit had it.
			if c.violation != "" && (strings.Count(got, c.violation) != 1 || !strings.Contains(got, "the Developer left")) {
				t.Errorf("violations %q: want %s once, the Developer's", s.Violations, c.violation)
			}
		})
	}
}
