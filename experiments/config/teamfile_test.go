package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// A roles file is a configuration's roles: on its own (hoh project init
// --roles): read and checked the same way, its paths made absolute against
// its folder and its problems named by its file, line and role.
func TestARolesFileIsReadAsARolesKey(t *testing.T) {
	text := strings.Join([]string{
		"planner:",
		"  harness: opencode",
		"  provider: {name: scripted, api: chat, key_env: K, model: small}",
		"  scripted: {script: script.yaml}",
		"qa:",
		"  harness: claude",
		"  provider: {name: scripted, api: anthropic, key_env: K, model: judge}",
		"  scripted: {script: script.yaml}",
		""}, "\n")
	path := filepath.Join(filepath.Dir(write(t, "")), "roles.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRoles(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Agent(runrecord.RoleDeveloper) != nil || r.Planner.Provider.Model != "small" || r.QA.Harness != "claude" ||
		r.QA.Scripted.Script != filepath.Join(filepath.Dir(path), "script.yaml") {
		t.Errorf("roles %+v planner %+v qa %+v", r, r.Planner, r.QA)
	}
	bad := strings.Replace(text, "harness: claude", "harness: claud", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadRoles(path)
	var ps Problems
	if !errors.As(err, &ps) || !strings.Contains(err.Error(), path+":6: role qa:") || !strings.Contains(err.Error(), "the roles file") {
		t.Errorf("bad harness: %v", err)
	}
	if err := os.WriteFile(path, []byte("planer:\n  harness: codex\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRoles(path); err == nil || !strings.Contains(err.Error(), path+":1:") || !strings.Contains(err.Error(), `"planner"`) {
		t.Errorf("misspelt role: %v", err)
	}
}
