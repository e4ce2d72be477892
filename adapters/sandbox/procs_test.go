package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// A process a crashed run left (recorded with its start time) is ended; a
// live process whose pid matches a record but whose start time does not (a
// reused pid) is left alone.
func TestLeftoversEndsOnlyTheRecordedProcesses(t *testing.T) {
	l := Leftovers{Path: filepath.Join(t.TempDir(), "private", "procs.jsonl")}
	left := exec.Command("sleep", "303")
	left.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { left.Wait(); close(done) }()
	defer left.Process.Kill()
	if err := l.Record(left.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// A record of this very test process with another start time: its pid
	// was "reused".
	start, err := procStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(l.Path, os.O_APPEND|os.O_WRONLY, 0)
	line, _ := json.Marshal(procRecord{PID: os.Getpid(), Start: start + 1})
	f.Write(append(line, '\n'))
	f.Close()

	killed, err := l.End()
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) != 1 || killed[0] != left.Process.Pid {
		t.Fatalf("killed %v, want only %d", killed, left.Process.Pid)
	}
	<-done
	if _, err := os.Stat(l.Path); !os.IsNotExist(err) {
		t.Fatalf("records kept after End: %v", err)
	}
	if again, err := l.End(); err != nil || len(again) != 0 {
		t.Fatalf("second End: %v %v", again, err)
	}
}
