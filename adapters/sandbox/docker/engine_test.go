package docker

import (
	"slices"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// Podman takes a change's value as the rest of the line: one value per
// change, unquoted, and an empty entrypoint as [] (not the container's).
func TestPodmanChangesCarryTheCommitConfig(t *testing.T) {
	cfg := &container.Config{
		Labels: map[string]string{"hoh.run": "r 1"}, Env: []string{"PATH=/usr/bin:/bin", "KEY=", "A=b=c d"},
		Cmd: []string{"/bin/sh"}, WorkingDir: "/app",
	}
	got := podmanChanges(cfg)
	for _, want := range []string{"LABEL hoh.run=r 1", "ENV PATH=/usr/bin:/bin", "ENV KEY=", "ENV A=b=c d", "ENTRYPOINT []", `CMD ["/bin/sh"]`, "WORKDIR /app"} {
		if !slices.Contains(got, want) {
			t.Errorf("changes %q lack %q", got, want)
		}
	}
	if slices.ContainsFunc(got, func(s string) bool { return len(s) > 4 && s[:4] == "USER" }) {
		t.Errorf("no USER was configured: %q", got)
	}
}

// An image matches only when it carries every label (Docker's rule; Podman
// answers images carrying any one).
func TestHasLabelsWantsAll(t *testing.T) {
	have := map[string]string{LabelRun: "r", "hoh.checkpoint": "1"}
	if !hasLabels(have, []string{LabelRun + "=r", "hoh.checkpoint=1"}) || !hasLabels(have, []string{"hoh.checkpoint"}) {
		t.Error("an image with every label is not matched")
	}
	if hasLabels(have, []string{LabelRun + "=r", "hoh.checkpoint.trial=x"}) || hasLabels(have, []string{"hoh.checkpoint=2"}) {
		t.Error("an image lacking a label is matched")
	}
}

// A rootless engine on cgroup v1 sets no limits and cannot pause; doctor
// names both.
func TestEngineLacks(t *testing.T) {
	e := Engine{Podman: true, Version: "4.3.1", Rootless: true, CgroupVersion: "1", StorageDriver: "vfs"}
	if e.CanPause() || e.Name() != "Podman 4.3.1 (rootless)" || len(e.Lacks()) != 4 {
		t.Errorf("%s: can pause %v, lacks %q", e.Name(), e.CanPause(), e.Lacks())
	}
	d := Engine{Version: "26.1.5", CgroupVersion: "2", StorageDriver: "overlay2", Limits: true}
	if !d.CanPause() || d.Name() != "Docker Engine 26.1.5" || len(d.Lacks()) != 0 {
		t.Errorf("%s: can pause %v, lacks %q", d.Name(), d.CanPause(), d.Lacks())
	}
}
