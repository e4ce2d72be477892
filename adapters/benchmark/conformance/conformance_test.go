package conformance

import (
	"path/filepath"
	"testing"
)

// HOH_HOST_GPUS and HOH_HOST_INTERNET describe the machine the trials will
// run on, so a checkout can be checked for it from another.
func TestDetectHostTakesTheHostFromTheEnvironment(t *testing.T) {
	t.Setenv("HOH_HOST_GPUS", "4")
	t.Setenv("HOH_HOST_INTERNET", "1")
	if h := DetectHost(); h.GPUs != 4 || !h.Internet {
		t.Fatalf("DetectHost() = %+v, want 4 GPUs and internet", h)
	}
	t.Setenv("HOH_HOST_GPUS", "many") // not a count: the device nodes decide
	t.Setenv("HOH_HOST_INTERNET", "")
	nodes, _ := filepath.Glob("/dev/nvidia[0-9]*")
	if h := DetectHost(); h.GPUs != len(nodes) || h.Internet {
		t.Fatalf("DetectHost() = %+v with a malformed HOH_HOST_GPUS and no HOH_HOST_INTERNET", h)
	}
}
