package dockerenv

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
)

// recorder collects a helper's Errorf calls instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// An image built through the client carries its run label, so the check
// that runs at cleanup would report it; once removed, nothing is reported.
func TestLabelledImageIsReportedUntilRemoved(t *testing.T) {
	c := Client(t, "dockerenv")
	img := BusyboxImage(t, c, "")
	r := &recorder{TB: t}
	AssertNothingLabelled(r, c)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "images left with label "+c.RunID()+": 1") {
		t.Fatalf("errors %q, want the one image reported", r.errors)
	}
	if _, err := c.API.ImageRemove(context.Background(), img, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
		t.Fatal(err)
	}
	r.errors = nil
	AssertNothingLabelled(r, c)
	if len(r.errors) != 0 {
		t.Fatalf("after removal: %q", r.errors)
	}
}
