package history

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Recorded is what Record kept of the workspace and what it could not.
type Recorded struct {
	Commit string
	// Metadata lists the version-control entries named .git (a nested
	// repository's, or the workspace's own when it is not excluded): git
	// cannot hold a path named .git, so they stay on disk but are not part
	// of the artifact. A nested repository's work tree is recorded as
	// plain files.
	Metadata []string
	// Refused lists the entries git cannot hold, each with the reason: left
	// out of the commit (and of Digest), kept on disk.
	Refused []string
}

// Record commits the workspace as it is on disk, whatever an agent left in
// it: no ignore file (.gitignore, info/exclude, a global one) hides part of
// it, a nested repository or submodule is recorded as the plain files of
// its work tree, and a name git cannot hold is left out and listed rather
// than failing the commit. hoh's index is built from its own walk of the
// workspace (git update-index), never by git add's traversal, which stops at
// a nested repository. Empty commits are allowed: every stage leaves one.
func (r *Repo) Record(message string) (Recorded, error) {
	var rec Recorded
	paths, err := r.scan(&rec)
	if err != nil {
		return rec, err
	}
	if err := r.stage(paths, &rec); err != nil {
		return rec, err
	}
	rec.Commit, err = r.CommitIndex(message)
	return rec, err
}

// CommitIndex commits the index as it is, without looking at the work
// tree: for a caller that knows the work tree holds what the last Record
// staged (a digest says so), where Record would walk it to the same index.
// It is git's plumbing (write-tree, commit-tree, update-ref), not git
// commit, which refreshes the index first: a stat of every file in the
// work tree, 20,000 for a large artifact, that Record's update-index has
// just done (issue 42). The commit may be empty: every stage leaves one.
func (r *Repo) CommitIndex(message string) (string, error) {
	tree, err := r.git(nil, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree, "-m", message}
	parent, err := r.parent()
	if err != nil {
		return "", err
	}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	commit, err := r.git(nil, args...)
	if err != nil {
		return "", err
	}
	subject, _, _ := strings.Cut(message, "\n")
	if _, err := r.git(nil, "update-ref", "-m", "commit: "+subject, "HEAD", commit); err != nil {
		return "", err
	}
	return commit, nil
}

// parent is HEAD's commit, "" before the repository's first commit; a
// HEAD that cannot be read in a repository that has commits is an error,
// never a new root.
func (r *Repo) parent() (string, error) {
	if h := r.Head(); h != "" {
		return h, nil
	}
	any, err := r.git(nil, "rev-list", "-n1", "--all")
	if err != nil || any != "" {
		return "", fmt.Errorf("git: HEAD names no commit in a repository that has some (%v)", err)
	}
	return "", nil
}

// Commit is Record for callers that keep no account of what was left out.
func (r *Repo) Commit(message string) (string, error) {
	rec, err := r.Record(message)
	return rec.Commit, err
}

// leftOut says why git cannot hold the entry named name ("" when it can):
// a path component .git in any case (git refuses it on every platform), or a
// symbolic link named .gitmodules.
func leftOut(name string, mode fs.FileMode) string {
	switch {
	case name == ".git":
		return "metadata"
	case strings.EqualFold(name, ".git"):
		return "git cannot hold a path component named .git in any case"
	case mode&fs.ModeSymlink != 0 && strings.EqualFold(name, ".gitmodules"):
		return "git cannot hold a symbolic link named .gitmodules"
	}
	return ""
}

// Quote renders a workspace path for a record or a log line: names with
// newlines, control bytes or invalid UTF-8 are escaped as a Go string.
func Quote(rel string) string { return strconv.Quote(rel) }

// scan lists the workspace's regular files and symbolic links relative to
// Work (what git records; devices, FIFOs and sockets never were), leaving
// out the top-level Exclude entries and what leftOut names.
func (r *Repo) scan(rec *Recorded) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(r.Work, func(p string, d fs.DirEntry, err error) error {
		if p == r.Work || err != nil && d == nil {
			return err
		}
		rel, _ := filepath.Rel(r.Work, p)
		if err != nil {
			// A directory the agent made unreadable to hoh.
			rec.Refused = append(rec.Refused, fmt.Sprintf("%s: %v", Quote(rel), err))
			return filepath.SkipDir
		}
		if filepath.Dir(p) == r.Work && slices.Contains(r.Exclude, d.Name()) {
			return skipEntry(d)
		}
		switch why := leftOut(d.Name(), d.Type()); why {
		case "":
		case "metadata":
			rec.Metadata = append(rec.Metadata, rel)
			return skipEntry(d)
		default:
			rec.Refused = append(rec.Refused, Quote(rel)+": "+why)
			return skipEntry(d)
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			paths = append(paths, rel)
		}
		return nil
	})
	return paths, err
}

func skipEntry(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// stage makes the index hold exactly paths: entries no longer on the list
// are removed, the others added or refreshed (unchanged files are known by
// their stat data and not read again). A path git still refuses is found by
// halving the batch and listed in rec.Refused.
func (r *Repo) stage(paths []string, rec *Recorded) error {
	out, err := r.gitRaw(nil, nil, "ls-files", "-z", "--full-name")
	if err != nil {
		return err
	}
	keep := make(map[string]bool, len(paths))
	for _, p := range paths {
		keep[p] = true
	}
	var stale []string
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if p != "" && !keep[p] {
			stale = append(stale, p)
		}
	}
	if len(stale) > 0 {
		if _, err := r.gitRaw(nil, nulList(stale), "update-index", "--force-remove", "-z", "--stdin"); err != nil {
			return err
		}
	}
	return r.addPaths(paths, rec)
}

func (r *Repo) addPaths(paths []string, rec *Recorded) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := r.gitRaw(nil, nulList(paths), "update-index", "--add", "--replace", "-z", "--stdin")
	if err == nil {
		return nil
	}
	// A git that cannot write at all (a full disk, a broken repository)
	// is hoh's fault, never a path to leave out.
	if _, perr := r.gitRaw(nil, []byte("hoh"), "hash-object", "-w", "--stdin"); perr != nil {
		return err
	}
	if len(paths) == 1 {
		rec.Refused = append(rec.Refused, fmt.Sprintf("%s: %v", Quote(paths[0]), err))
		return nil
	}
	h := len(paths) / 2
	if err := r.addPaths(paths[:h], rec); err != nil {
		return err
	}
	return r.addPaths(paths[h:], rec)
}

func nulList(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// gitRaw is git with stdin and untrimmed output (NUL-separated lists).
func (r *Repo) gitRaw(env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := r.command(env, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}
