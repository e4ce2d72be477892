package docker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// A run uses the relay built at install time and refuses one that would not
// start in an image without a C library; a missing relay says how to build it.
func TestFindRelayBinary(t *testing.T) {
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	static := filepath.Join(dir, "static", "hoh-relay")
	if err := BuildRelayBinary(context.Background(), root, static); err != nil {
		t.Fatal(err)
	}
	t.Setenv(RelayEnv, static)
	if got, err := FindRelayBinary(); err != nil || got != static {
		t.Errorf("FindRelayBinary() = %q, %v; want %q", got, err, static)
	}

	dynamic := "/bin/ls" // Debian's coreutils are dynamically linked
	t.Setenv(RelayEnv, dynamic)
	if _, err := FindRelayBinary(); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("a dynamically linked relay: err = %v, want a refusal saying CGO_ENABLED=0", err)
	}

	t.Setenv(RelayEnv, filepath.Join(dir, "absent"))
	if _, err := FindRelayBinary(); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("a missing relay: err = %v, want how to build it", err)
	}
}
