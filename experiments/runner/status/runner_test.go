package status

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadRunnerTellsAKilledRunnerFromALiveOne(t *testing.T) {
	out := t.TempDir()
	if r := ReadRunner(out); r.PID != 0 || r.Alive {
		t.Errorf("never ran: %+v", r)
	}
	path := filepath.Join(out, ".lock")
	os.WriteFile(path, []byte("pid 4242\n"), 0o644)
	if r := ReadRunner(out); r.PID != 4242 || r.Alive {
		t.Errorf("killed runner (lock file, no flock): %+v", r)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if r := ReadRunner(out); r.PID != 4242 || !r.Alive {
		t.Errorf("live runner holding the flock: %+v", r)
	}
}
