package status

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Runner is what the run directory's .lock says about its runner.
type Runner struct {
	PID   int  // the last runner's process id (0: never ran)
	Alive bool // it still holds the lock
}

// ReadRunner tells whether a runner holds out's lock, by trying a shared
// lock on it (released at once): a killed runner's flock is gone with it.
func ReadRunner(out string) Runner {
	path := filepath.Join(out, ".lock")
	data, err := os.ReadFile(path)
	if err != nil {
		return Runner{}
	}
	var r Runner
	if f := strings.Fields(string(data)); len(f) == 2 && f[0] == "pid" {
		r.PID, _ = strconv.Atoi(f[1])
	}
	f, err := os.Open(path)
	if err != nil {
		return r
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		r.Alive = true
		return r
	}
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	return r
}
