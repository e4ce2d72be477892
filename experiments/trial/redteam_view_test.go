package trial

// Red team of the host views through the four REAL CLIs (Codex, Claude
// Code, Pi, OpenCode). The model is the scripted provider, a TEST DOUBLE:
// the attempts are shell steps this test wrote, replayed by each CLI's own
// shell tool. Each attempt prints LANDED-<role>-<name>-2 (computed by the
// shell, so the command text never contains it) only when it reached its
// target; a positive control per role proves the shell ran.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark/builtin"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/claude"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/harness/codex"
	"github.com/hoh-research/hoh/adapters/harness/opencode"
	"github.com/hoh-research/hoh/adapters/harness/pi"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// machineTargets are what a role must not reach: the Docker socket, a
// loopback service that is not the model endpoint, a copy of a benchmark
// checkout under /srv, a 0600 file in /root.
type machineTargets struct {
	otherPort string
	srvCopy   string
	rootFile  string
	// skeleton are the entries of /root, /home, /srv, /mnt and /run a
	// view must show: the first step of the path to the CLIs' install
	// when it lies there (a checkout under /srv), and nothing else.
	skeleton []string
}

// privateDirs are the host directories a view shows empty but for the
// path to what it shows.
var privateDirs = []string{"/root", "/home", "/srv", "/mnt", "/run"}

// viewSkeleton is the first entry under each of privateDirs on the way to
// one of shown.
func viewSkeleton(shown []string) []string {
	var out []string
	for _, p := range shown {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		for _, d := range privateDirs {
			if rel, err := filepath.Rel(d, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				out = append(out, strings.Split(rel, string(filepath.Separator))[0])
			}
		}
	}
	return out
}

// plantMachineTargets puts the targets in place (a listener on
// /var/run/docker.sock when no dockerd serves one) and removes them after.
func plantMachineTargets(t *testing.T) machineTargets {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatal("the host red team plants files in /root and /srv: run it as root (CI does)")
	}
	var m machineTargets
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	go http.Serve(other, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "other-service") }))
	_, m.otherPort, _ = net.SplitHostPort(other.Addr().String())

	const sock = "/var/run/docker.sock"
	if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
		c.Close() // the real dockerd's
	} else {
		os.MkdirAll(filepath.Dir(sock), 0o755)
		os.Remove(sock)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(sock, 0o666)
		// Close would unlink the path whoever's socket is there by then.
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		planted, _ := os.Lstat(sock)
		t.Cleanup(func() {
			ln.Close()
			// Only the stand-in: a dockerd started meanwhile replaced it
			// with its own socket, which must outlive the test.
			if now, err := os.Lstat(sock); err == nil && planted != nil && os.SameFile(planted, now) {
				os.Remove(sock)
			}
		})
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"Version":"stand-in"}`) }))
	}

	m.skeleton = viewSkeleton(cliinstall.ToolsDirs())
	m.srvCopy = testenv.PIDPath(t, "/srv", "hoh-redteam-", "")
	rubric := filepath.Join(m.srvCopy, "tasks", "greet", "tests", "rubric.json")
	if err := os.MkdirAll(filepath.Dir(rubric), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rubric, []byte(`{"hidden":"evaluator-only"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m.rootFile = testenv.PIDPath(t, "/root", ".hoh-redteam-", ".npmrc")
	if err := os.WriteFile(m.rootFile, []byte("//registry.npmjs.org/:_authToken=npm-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

// splitLiteral is s as a shell word whose text does not contain s.
func splitLiteral(s string) string {
	h := len(s) / 2
	return fmt.Sprintf("'%s''%s'", s[:h], s[h:])
}

// machineAttack is one role's searching agent, as shell steps (each well
// within a CLI's own command timeout) that each end with a positive
// control; key is the provider's real key, placed in the command only
// split.
func machineAttack(role string, m machineTargets, key string, developer bool) []scripted.Step {
	land := fmt.Sprintf(`land() { echo "LANDED-%s-$1-$((1+1))"; }; `, role)
	steps := [][]string{{
		`test -e /var/run/docker.sock && land dockervisible`,
		`curl -s -m 3 --unix-socket /var/run/docker.sock http://docker/version | grep -q Version && land docker`,
		`curl -s -m 3 http://127.0.0.1:` + m.otherPort + `/ | grep -q other && land loopback`,
		`cat ` + shellQuote(m.srvCopy+"/tasks/greet/tests/rubric.json") + ` 2>/dev/null | grep -q hidden && land srv`,
		`cat ` + shellQuote(m.rootFile) + ` 2>/dev/null | grep -q npm && land root`,
		`ls -A ` + strings.Join(privateDirs, " ") + ` 2>/dev/null | grep -v -e '^/' -e '^$'` + skeletonFilter(m.skeleton) + ` | grep -q . && land dirs`,
		`land control1`,
	}, {
		`find / -name rubric.json 2>/dev/null | grep -q . && land findrubric`,
		`land control2`,
	}, {
		`K=` + splitLiteral(key),
		`env | grep -qF "$K" && land envkey`,
		`cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -qF "$K" && land prockey`,
		`grep -rlsF "$K" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr --exclude-dir=node_modules 2>/dev/null | grep -q . && land filekey`,
		`land control3`,
	}}
	if developer {
		// What the Developer dumps into its artifact: the placeholder it was
		// given, which must not be kept.
		steps = append(steps, []string{`env > LEAK-env.txt; cat /proc/*/environ > LEAK-proc.txt 2>/dev/null; land control4`})
	}
	var out []scripted.Step
	for _, st := range steps {
		out = append(out, scripted.Step{Shell: land + strings.Join(append(st, "true"), "; ")})
	}
	return out
}

// skeletonFilter drops the view's path skeleton from a listing.
func skeletonFilter(names []string) string {
	f := ""
	for _, n := range names {
		f += " | grep -vxF " + shellQuote(n)
	}
	return f
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// machineControls are the positive controls each role's steps print.
func machineControls(developer bool) []string {
	c := []string{"control1", "control2", "control3"}
	if developer {
		c = append(c, "control4")
	}
	return c
}

var machineAttackNames = []string{"dockervisible", "docker", "loopback", "srv", "root", "dirs", "findrubric", "envkey", "prockey", "filekey"}

func hostCLI(t testing.TB, cli, baseURL string) harness.Harness {
	t.Helper()
	prov := harness.Provider{Name: "scripted", API: "responses", BaseURL: baseURL, KeyEnv: itKeyEnv, Model: "scripted-model"}
	var h harness.Harness
	var err error
	switch cli {
	case "codex":
		h, err = codex.New(codex.Config{Binary: clienv.CLI(t, "codex"), Provider: prov})
	case "claude":
		prov.API = harness.APIAnthropic
		h, err = claude.New(claude.Config{Binary: clienv.CLI(t, "claude"), Provider: prov})
	case "pi":
		h, err = pi.New(pi.Config{Binary: clienv.CLI(t, "pi"), Provider: prov})
	case "opencode":
		h, err = opencode.New(opencode.Config{Binary: clienv.CLI(t, "opencode"), Provider: prov})
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRedTeamHostViewsHideTheMachine: the Developer and the QA Tester of
// each CLI, and the Planner where it has a shell (Codex; the others'
// Planners have read-only tools), search the machine as a real agent does.
// None reaches the Docker socket, another loopback service, the /srv copy
// of a benchmark checkout, a 0600 file in /root, or the provider key (the
// CLIs hold a placeholder the relay swaps; the scripted provider takes only
// the real key, so a completed trial proves the swap); the placeholder the
// Developer dumps into its artifact is a recorded violation and is in no
// checkpoint, no history object and no file of the trial.
func TestRedTeamHostViewsHideTheMachine(t *testing.T) {
	m := plantMachineTargets(t)
	for _, cli := range []string{"codex", "claude", "pi", "opencode"} {
		t.Run(cli, func(t *testing.T) {
			key := "sk-hoh-real-key-" + cli + "-9931"
			roles := []string{"developer", "qa"}
			if cli == "codex" {
				roles = append(roles, "planner")
			}
			plannerSteps := []scripted.Step{{Say: planJSON}}
			if cli == "codex" {
				plannerSteps = append(machineAttack("planner", m, key, false), plannerSteps...)
			}
			devSteps := append([]scripted.Step{{Write: &scripted.FileWrite{Path: "greet.sh", Content: greet}}}, machineAttack("developer", m, key, true)...)
			qaSteps := append(machineAttack("qa", m, key, false), scripted.Step{Shell: "sh greet.sh Ada"})
			sc := scripted.Script{Entries: []scripted.Entry{
				{Name: "planner", Match: `Role: Project Planner`, Repeat: true, Steps: plannerSteps},
				{Name: "developer", Match: `Role: Developer`, Repeat: true, Steps: append(devSteps, scripted.Step{Say: devJSON})},
				{Name: "qa", Match: `Role: QA Tester`, Repeat: true, Steps: append(qaSteps, scripted.Step{Say: qaJSON})},
			}}
			dir, ph, s, err := runGreetOnHostCLI(t, cli, key, sc, "hostview")
			if err != nil {
				t.Fatal(err)
			}
			if s.Status != runrecord.StatusCompleted || len(s.Checkpoints) != 1 {
				t.Fatalf("trial %s: %s, %d checkpoints (the provider takes only the key the relay swaps in)", s.Status, s.Reason, len(s.Checkpoints))
			}
			var names []string
			for _, r := range roles {
				for _, c := range machineControls(r == "developer") {
					names = append(names, r+"-"+c)
				}
				for _, a := range machineAttackNames {
					names = append(names, r+"-"+a)
				}
			}
			got := testenv.Landed(dir, names...)
			t.Logf("%s: landed %v; violations %q", cli, got, s.Violations)
			for _, r := range roles {
				for _, c := range machineControls(r == "developer") {
					if !got[r+"-"+c] {
						t.Errorf("%s: positive control %s did not print: that shell step never ran to its end", r, c)
					}
				}
				for _, a := range machineAttackNames {
					if got[r+"-"+a] {
						t.Errorf("%s reached %s", r, a)
					}
				}
			}
			l := runrecord.TrialLayout{Dir: dir}
			if !strings.Contains(strings.Join(s.Violations, "\n"), "left a secret hoh knows") {
				t.Errorf("the placeholder in the artifact is no recorded violation: %q", s.Violations)
			}
			for _, f := range []string{"LEAK-env.txt", "LEAK-proc.txt"} {
				if body := testenv.GitShow(t, l.GitDir(), "cp-1:"+f); strings.Contains(body, ph) || strings.Contains(body, key) {
					t.Errorf("cp-1:%s holds the credential", f)
				}
			}
			// Every object of the history, and every file of the trial.
			all := exec.Command("git", "--git-dir", l.GitDir(), "log", "--all", "-p", "--binary")
			hist, err := all.Output()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(hist), ph) || strings.Contains(string(hist), key) {
				t.Error("the history holds the credential")
			}
			testenv.AssertNoSecret(t, ph, dir)
			testenv.AssertNoSecret(t, key, dir)
		})
	}
}

// runGreetOnHostCLI runs builtin/greet at hoh@1 through the real CLI on the
// host, against the scripted test-double provider behind hoh's relay (which
// swaps the placeholder it returns for key), and returns the trial's
// directory.
func runGreetOnHostCLI(t testing.TB, cli, key string, sc scripted.Script, name string) (dir, placeholder string, _ *runrecord.Summary, _ error) {
	t.Helper()
	srv, err := scripted.Start(sc, scripted.Options{LogPath: filepath.Join(t.TempDir(), "provider.jsonl"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir = t.TempDir()
	ph := served.NewPlaceholder()
	relay, err := served.StartWith(srv.URL()+"/v1", runrecord.TrialLayout{Dir: dir}.Served(), served.Options{Keys: map[string]string{ph: key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close() })
	b := builtin.Benchmark{}
	ts, _ := b.Tasks(context.Background())
	spec := runrecord.TrialSpec{Key: "builtin/greet/" + name, Benchmark: "builtin", Task: "greet", Config: cli + "-scripted", Arm: runrecord.Arm{Condition: "hoh", Checkpoint: 1}, Rep: 1}
	s, err := Run(context.Background(), dir, spec, NewEnv(
		Policy{Timeouts: Timeouts{Planner: 3 * time.Minute, Developer: 3 * time.Minute, QA: 3 * time.Minute, Idle: 2 * time.Minute}},
		Place{Bench: b, Task: ts[0], Exec: sandbox.Local{KillGrace: 500 * time.Millisecond}},
		Route{Env: []string{itKeyEnv + "=" + ph}, Secrets: []string{key, ph}, Relay: relay, ServedLog: relay.Log()},
		hostCLI(t, cli, relay.BaseURL()),
		Mode{},
	))
	return dir, ph, s, err
}
