package trial

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hoh-research/hoh/runrecord"
)

// Local faults are the machine's, not the agent's: a full disk, a read-only
// or failing file system. An invocation or a record write hit by one is an
// infrastructure failure (replaced, never a score), whatever the CLI's exit
// said: a CLI that could not write its own state (Codex's rollout) reports
// too few tokens, or none.

var localErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EROFS, syscall.EIO, syscall.EDQUOT}

// localTexts are how those errors read in a CLI's stderr or a git message.
var localTexts = []string{"ENOSPC", "No space left on device", "EROFS", "Read-only file system",
	"Input/output error", "EDQUOT", "Disk quota exceeded"}

// IsLocal reports whether err is an infrastructure failure caused by a
// local fault.
func IsLocal(err error) bool {
	var ie *InfraError
	return errors.As(err, &ie) && ie.Local
}

// localText returns the first local-fault phrase in s, or "".
func localText(s string) string {
	for _, t := range localTexts {
		if strings.Contains(s, t) {
			return t
		}
	}
	return ""
}

// asLocal turns an error of hoh's own (a record, a git commit) caused by a
// local fault into an InfraError; other errors are returned as they are.
func asLocal(stage string, err error) error {
	if err == nil || IsInfra(err) {
		return err
	}
	for _, e := range localErrnos {
		if errors.Is(err, e) {
			return &InfraError{Stage: stage, Evidence: "local fault: " + err.Error(), Local: true}
		}
	}
	if localText(err.Error()) != "" {
		return &InfraError{Stage: stage, Evidence: "local fault: " + err.Error(), Local: true}
	}
	return err
}

// probeSize is written and synced to check a directory is still writable.
const probeSize = 64 << 10

// Probe writes, syncs and removes a small file in dir: the error says the
// file system under dir cannot take a write now.
func Probe(dir string) error {
	f, err := os.CreateTemp(dir, ".hoh-probe-")
	if err != nil {
		return err
	}
	name := f.Name()
	defer os.Remove(name)
	_, err = f.Write(make([]byte, probeSize))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// invocationFault says why an invocation that just ended met a local fault
// ("" when none): its stderr or evidence names one, or its state or log
// directory cannot take a write.
func invocationFault(evidence, logDir string, dirs ...string) string {
	if t := localText(evidence); t != "" {
		return fmt.Sprintf("the CLI reported %q: %s", t, firstLine(evidence))
	}
	if data, err := os.ReadFile(filepath.Join(logDir, runrecord.StderrLog)); err == nil {
		if t := localText(string(data)); t != "" {
			return fmt.Sprintf("the CLI's stderr reports %q", t)
		}
	}
	for _, d := range dirs {
		if err := Probe(d); err != nil {
			return fmt.Sprintf("%s cannot take a write after the invocation: %v", d, err)
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
