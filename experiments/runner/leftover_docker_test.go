package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
	"github.com/hoh-research/hoh/runrecord"
)

// A run killed by SIGKILL leaves its labelled images and containers; the
// next run of the same directory removes them before it starts, and leaves
// other runs' objects alone.
func TestResumeRemovesWhatAKilledRunLeftInDocker(t *testing.T) {
	killed := dockerenv.Client(t, "killed-run")
	dockerenv.BusyboxImage(t, killed, "")
	other := dockerenv.Client(t, "other-run")
	otherImage := dockerenv.BusyboxImage(t, other, "")
	out := t.TempDir()
	os.WriteFile(runrecord.RunLayout{Dir: out}.DockerRuns(), []byte(killed.RunID()+"\n"), 0o644)
	relayTmp, err := os.MkdirTemp("", docker.RelayTempPrefix(killed.RunID()))
	if err != nil {
		t.Fatal(err)
	}
	otherTmp, _ := os.MkdirTemp("", docker.RelayTempPrefix(other.RunID()))
	defer os.RemoveAll(otherTmp)

	resumed := dockerenv.Client(t, "resumed-run")
	if err := cleanupEarlierRuns(context.Background(), resumed, out); err != nil {
		t.Fatal(err)
	}
	dockerenv.AssertNothingLabelled(t, killed)
	if _, err := os.Stat(relayTmp); !os.IsNotExist(err) {
		t.Errorf("the killed run's relay directory %s is still there", relayTmp)
	}
	if _, err := os.Stat(otherTmp); err != nil {
		t.Errorf("another run's relay directory was removed: %v", err)
	}
	if _, err := other.API.ImageInspect(context.Background(), otherImage); err != nil {
		t.Errorf("another run's image was removed: %v", err)
	}
	data, _ := os.ReadFile(runrecord.RunLayout{Dir: out}.DockerRuns())
	if strings.TrimSpace(string(data)) != resumed.RunID() {
		t.Errorf("%s: %q", runrecord.DockerRunsFile, data)
	}
}
