package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/analysis/viewer"
	"github.com/hoh-research/hoh/experiments/project"
)

// hoh project init without --api takes the harness's default wire API from
// the harness catalogue: chat for OpenCode and Pi, responses for Codex,
// anthropic for Claude Code.
func TestProjectInitTakesTheAPIFromTheCatalogue(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "SPEC.md")
	if err := os.WriteFile(spec, []byte("# Tiny app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]string{"opencode": "chat", "pi": "chat", "codex": "responses", "claude": "anthropic"} {
		cli, ok := catalogue.Lookup(kind)
		if !ok || cli.DefaultAPI() != want {
			t.Fatalf("catalogue: %s's default API is %q, want %q", kind, cli.DefaultAPI(), want)
		}
		dir := filepath.Join(t.TempDir(), kind)
		if err := projectInit([]string{"--spec", spec, "--repo", dir, "--harness", kind, "--provider", "p", "--model", "m",
			"--base-url", "http://127.0.0.1:1/v1", "--key-env", "HOH_TEST_KEY"}, io.Discard, io.Discard); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		c, err := project.LoadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if c.Harness.Provider.API != want {
			t.Errorf("hoh project init --harness %s wrote api %q, want %q (the catalogue's)", kind, c.Harness.Provider.API, want)
		}
	}
}

// hoh project init --roles reads the file as a config's roles: (each
// agent checked, its script made absolute against the file's folder); a
// bad agent fails the init at the file's line, naming the role, and leaves
// no project behind.
func TestProjectInitReadsARolesFile(t *testing.T) {
	root := t.TempDir()
	spec := filepath.Join(root, "SPEC.md")
	script := "entries:\n  - name: a\n    match: .\n    steps:\n      - say: ok\n"
	roles := "planner:\n  harness: opencode\n  provider: {name: scripted, api: chat, key_env: K, model: small}\n  scripted: {script: script.yaml}\n" +
		"qa:\n  harness: claude\n  provider: {name: scripted, api: anthropic, key_env: K, model: judge}\n  scripted: {script: script.yaml}\n"
	rolesFile := filepath.Join(root, "roles.yaml")
	for p, text := range map[string]string{spec: "# Tiny app\n", filepath.Join(root, "script.yaml"): script, rolesFile: roles} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := func(dir string) []string {
		return []string{"--spec", spec, "--repo", dir, "--harness", "codex", "--scripted", filepath.Join(root, "script.yaml"), "--roles", rolesFile}
	}
	dir := filepath.Join(root, "good")
	if err := projectInit(args(dir), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	c, err := project.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Harness.Roles
	if r == nil || r.Planner == nil || r.QA == nil || r.Developer != nil || r.QA.Provider.Model != "judge" ||
		r.Planner.Scripted.Script != filepath.Join(root, "script.yaml") {
		t.Fatalf("roles in the project config: %+v", r)
	}
	if s, err := project.ReadStatus(dir); err != nil || !strings.Contains(s.Team, "opencode") {
		t.Errorf("status names no team: %+v %v", s, err)
	}
	// hoh view reads the config the init wrote: the project page names the team.
	res, err := viewer.Build(dir, viewer.Options{NoFigures: true})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(res.Index)
	if want := "team: Planner opencode (chat small) · Developer codex (responses "; !strings.Contains(string(page), want) ||
		!strings.Contains(string(page), "QA Tester claude (anthropic judge)") {
		t.Errorf("the project page names no team (want %q):\n%s", want, page)
	}
	if err := os.WriteFile(rolesFile, []byte(strings.Replace(roles, "harness: claude", "harness: claud", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "bad")
	err = projectInit(args(bad), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), rolesFile+":6: role qa:") || !strings.Contains(err.Error(), "claud") {
		t.Fatalf("an unknown harness in the roles file: %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed init left %s behind (%v)", bad, err)
	}
}
