package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Leftovers records the processes an owner (a trial) started, with their
// start times, so that a run that resumes after a crash of hoh can end the
// ones still running before it touches their workspace. A pid alone is not
// enough: it may have been reused by an unrelated process since.
type Leftovers struct{ Path string }

type procRecord struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot (/proc/PID/stat field 22)
}

// Record appends pid; a process gone before it is read is skipped.
func (l Leftovers) Record(pid int) error {
	start, err := procStart(pid)
	if err != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(procRecord{PID: pid, Start: start})
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// End kills every recorded process still running with its recorded start
// time (a Confined init takes its whole PID namespace with it), waits until
// they are gone, and forgets the records. It returns the pids it killed.
func (l Leftovers) End() ([]int, error) {
	f, err := os.Open(l.Path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var killed []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec procRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.PID <= 0 {
			continue // a torn last line
		}
		if start, err := procStart(rec.PID); err == nil && start == rec.Start {
			if syscall.Kill(rec.PID, syscall.SIGKILL) == nil {
				killed = append(killed, rec.PID)
			}
		}
	}
	f.Close()
	for _, pid := range killed {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if s, err := procState(pid); err != nil || s == "Z" || s == "X" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := os.Remove(l.Path); err != nil && !os.IsNotExist(err) {
		return killed, err
	}
	return killed, nil
}

// statFields are the fields of /proc/PID/stat after the command name.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

func procStart(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22 overall
}

func procState(pid int) (string, error) {
	f, err := statFields(pid)
	if err != nil || len(f) == 0 {
		return "", fmt.Errorf("no /proc/%d/stat", pid)
	}
	return f[0], nil
}
