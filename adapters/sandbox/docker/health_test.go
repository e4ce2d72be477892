package docker

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// A container without a health check is ready at once whichever engine
// describes it: Docker gives no Health, Podman's compatible API an empty
// status (a wait for "healthy" there never ended). Starting waits; unhealthy
// and stopped are errors naming why.
func TestHealthyAcrossEngines(t *testing.T) {
	id := "0123456789abcdef"
	cases := []struct {
		name    string
		st      *container.State
		done    bool
		wantErr string
	}{
		{"docker, no health check", &container.State{Running: true}, true, ""},
		{"podman, no health check", &container.State{Running: true, Health: &container.Health{Status: ""}}, true, ""},
		{"none", &container.State{Running: true, Health: &container.Health{Status: container.NoHealthcheck}}, true, ""},
		{"healthy", &container.State{Running: true, Health: &container.Health{Status: container.Healthy}}, true, ""},
		{"starting", &container.State{Running: true, Health: &container.Health{Status: container.Starting}}, false, ""},
		{"unhealthy", &container.State{Running: true, Health: &container.Health{Status: container.Unhealthy, FailingStreak: 3,
			Log: []*container.HealthcheckResult{{ExitCode: 1, Output: "not ready\n"}}}}, false, `unhealthy after 3 failed check(s) (last check: exit 1, "not ready")`},
		{"stopped", &container.State{Status: "exited", ExitCode: 2}, false, "stopped before it was healthy: status exited, exit 2"},
	}
	for _, c := range cases {
		done, err := healthy(id, c.st)
		if done != c.done || (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: done %v, err %v; want done %v, error containing %q", c.name, done, err, c.done, c.wantErr)
		}
	}
}
