// Package history keeps the versioned history of a trial's workspace: a git
// repository whose .git lives outside the workspace (so the agent never sees
// it), one commit per role stage and a tag per checkpoint, so any checkpoint
// can be restored, diffed and evaluated. It also computes content digests
// that identify a candidate artifact.
package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hoh-research/hoh/internal/fstree"
)

// Repo is a workspace plus its out-of-tree git directory.
type Repo struct {
	GitDir string
	Work   string
	// Exclude names top-level entries of Work that are not part of the
	// artifact (a project's own .git, hoh's state directory): never
	// committed, never removed by Restore.
	Exclude []string
}

// Open initialises the git directory if needed and returns the repository.
func Open(gitDir, work string) (*Repo, error) {
	// git runs in the workspace, so relative paths would resolve from there.
	var err error
	if gitDir, err = filepath.Abs(gitDir); err != nil {
		return nil, err
	}
	if work, err = filepath.Abs(work); err != nil {
		return nil, err
	}
	r := &Repo{GitDir: gitDir, Work: work}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err == nil {
		return r, r.neutraliseAttributes()
	}
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command("git", "-c", "init.templateDir=", "init", "--quiet")
	cmd.Env = append(os.Environ(), "GIT_DIR="+gitDir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init %s: %v: %s", gitDir, err, out)
	}
	return r, r.neutraliseAttributes()
}

// neutralAttributes override any .gitattributes an agent writes into the
// workspace ($GIT_DIR/info/attributes takes precedence): no filter, no
// end-of-line or encoding conversion, so a checkpoint's export has exactly
// the bytes of the workspace and no command an attribute names is run.
const neutralAttributes = "* -text -filter -ident -working-tree-encoding\n"

func (r *Repo) neutraliseAttributes() error {
	p := filepath.Join(r.GitDir, "info", "attributes")
	if b, err := os.ReadFile(p); err == nil && string(b) == neutralAttributes {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(neutralAttributes), 0o644)
}

func (r *Repo) git(env []string, args ...string) (string, error) {
	cmd := r.command(env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// command is git on the repository, isolated from the user's and the
// system's configuration and from whatever the workspace holds.
func (r *Repo) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{
		"-c", "core.excludesFile=", "-c", "core.autocrlf=false", "-c", "core.fileMode=true",
		"-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false", "-c", "gc.auto=0",
		// A project's repository is the user's: its hooks, fsmonitor,
		// filters and templates must not run inside hoh's stage commits.
		"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
		"-c", "commit.template=", "-c", "core.attributesFile=/dev/null",
		"-c", "core.sshCommand=false", "-c", "protocol.allow=never", "-c", "diff.external=",
		// Names only Windows or macOS find dangerous (git~1, .git.) are
		// ordinary files here; submodules are never entered.
		"-c", "core.protectNTFS=false", "-c", "core.protectHFS=false", "-c", "submodule.recurse=false",
	}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_DIR="+r.GitDir, "GIT_WORK_TREE="+r.Work,
		"GIT_AUTHOR_NAME=hoh", "GIT_AUTHOR_EMAIL=hoh@localhost",
		"GIT_COMMITTER_NAME=hoh", "GIT_COMMITTER_EMAIL=hoh@localhost",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = r.Work
	return cmd
}

// Tag points name at commit, replacing an earlier tag of that name (a resumed
// stage re-tags its checkpoint).
func (r *Repo) Tag(name, commit string) error {
	_, err := r.git(nil, "tag", "--force", name, commit)
	return err
}

// Head returns the current commit, or "" before the first commit.
func (r *Repo) Head() string {
	h, err := r.git(nil, "rev-parse", "--verify", "--quiet", "HEAD")
	if err != nil {
		return ""
	}
	return h
}

// Export writes the tree of ref into dir (which must exist), without
// touching the workspace or its index.
func (r *Repo) Export(ref, dir string) error {
	idx, err := os.CreateTemp("", "hoh-index-*")
	if err != nil {
		return err
	}
	idx.Close()
	os.Remove(idx.Name())
	defer os.Remove(idx.Name())
	x := &Repo{GitDir: r.GitDir, Work: dir}
	_, err = x.git([]string{"GIT_INDEX_FILE=" + idx.Name()}, "checkout", "--force", ref, "--", ".")
	if err != nil && strings.Contains(err.Error(), "did not match any file") {
		return nil // an empty tree
	}
	return err
}

// Checkout makes dir (which must exist) equal to the tree of ref, as
// Export into an empty directory would, keeping dir's index in indexFile
// between calls: only the files that differ from ref are written, by the
// index's stat data (ctime, size, inode, owner, mode; git's racy-clean
// rule re-reads a file changed in the same second as the index), and
// whatever ref does not hold is removed. Exporting one checkpoint after
// another then costs what changed between them, not the whole tree.
func (r *Repo) Checkout(ref, dir, indexFile string) error {
	x := &Repo{GitDir: r.GitDir, Work: dir}
	env := []string{"GIT_INDEX_FILE=" + indexFile}
	if _, err := x.git(env, "-c", "core.trustctime=true", "-c", "core.checkStat=default",
		"read-tree", "-u", "--reset", ref); err != nil {
		return err
	}
	// git never tracks a top-level .git, and clean leaves it.
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		return err
	}
	_, err := x.git(env, "clean", "--quiet", "-d", "--force", "--force", "-x")
	return err
}

// Restore makes the workspace equal to ref exactly (untracked files removed)
// without moving HEAD, so the history stays linear: the next commit records
// the restore as a change.
func (r *Repo) Restore(ref string) error {
	if !slices.Contains(r.Exclude, ".git") {
		// git never tracks a top-level .git, and clean leaves it: an empty
		// one is what Codex's sandbox leaves behind when it is killed.
		removeIfEmpty(filepath.Join(r.Work, ".git"))
	}
	if _, err := r.git(nil, "read-tree", "-u", "--reset", ref); err != nil {
		return err
	}
	args := []string{"clean", "--quiet", "-d", "--force", "--force", "-x"}
	for _, x := range r.Exclude {
		args = append(args, "-e", "/"+x)
	}
	_, err := r.git(nil, args...)
	return err
}

func removeIfEmpty(p string) {
	st, err := os.Lstat(p)
	switch {
	case err != nil:
	case st.IsDir():
		os.Remove(p) // fails when not empty, and is then kept
	case st.Mode().IsRegular() && st.Size() == 0:
		os.Remove(p)
	}
}

// RemoveStaleLocks deletes the lock files a killed git leaves in the git
// directory (index.lock, HEAD.lock, refs/.../*.lock, ...), which make every
// later git call fail, unless a live process still works on this git
// directory. It returns the locks removed.
func (r *Repo) RemoveStaleLocks() ([]string, error) {
	var locks []string
	err := filepath.WalkDir(r.GitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != r.GitDir && (d.Name() == "objects") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	if err != nil || len(locks) == 0 {
		return nil, err
	}
	if pid := gitProcess(r.GitDir); pid != 0 {
		return nil, fmt.Errorf("%s is locked (%s) by running process %d", r.GitDir, filepath.Base(locks[0]), pid)
	}
	for _, l := range locks {
		if err := os.Remove(l); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	return locks, nil
}

// gitProcess returns a live process whose environment names gitDir as its
// GIT_DIR (every git hoh runs has it), or 0.
func gitProcess(gitDir string) int {
	procs, _ := os.ReadDir("/proc")
	want := []byte("GIT_DIR=" + gitDir + "\x00")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", p.Name(), "environ"))
		if err == nil && bytes.Contains(append(env, 0), want) {
			return pid
		}
	}
	return 0
}

// Entry is one commit of the history.
type Entry struct {
	Commit  string
	Subject string
	Tags    []string
}

// Log returns the history, oldest first.
func (r *Repo) Log() ([]Entry, error) {
	if r.Head() == "" {
		return nil, nil
	}
	out, err := r.git(nil, "log", "--reverse", "--format=%H%x1f%s%x1f%D")
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\x1f")
		if len(f) < 3 {
			continue
		}
		e := Entry{Commit: f[0], Subject: f[1]}
		for _, ref := range strings.Split(f[2], ", ") {
			if t, ok := strings.CutPrefix(ref, "tag: "); ok {
				e.Tags = append(e.Tags, t)
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// DiffStat summarises the change between two refs.
func (r *Repo) DiffStat(from, to string) (string, error) {
	return r.git(nil, "diff", "--stat", from, to)
}

// NumStat counts the files and lines changed between two refs (binary
// files count as changed files without lines).
func (r *Repo) NumStat(from, to string) (files, added, deleted int, err error) {
	out, err := r.git(nil, "diff", "--numstat", "--no-renames", "--no-ext-diff", "--no-textconv", from, to)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 {
			continue
		}
		files++
		var a, d int
		if _, err := fmt.Sscan(f[0], &a); err == nil {
			added += a
		}
		if _, err := fmt.Sscan(f[1], &d); err == nil {
			deleted += d
		}
	}
	return files, added, deleted, nil
}

// Git runs a git command on the repository with the same isolation as
// every other call (no hooks, no user or system config) and returns its
// trimmed output.
func (r *Repo) Git(args ...string) (string, error) { return r.git(nil, args...) }

// Digest is a content digest of a directory tree: paths, executable bits,
// symlink targets and file contents, independent of timestamps. Two trees
// have the same digest exactly when they hold the same artifact, as Record
// keeps it (entries named .git are not part of it). Top-level
// entries named in skip are left out (see Repo.Exclude).
func Digest(dir string, skip ...string) (string, error) {
	l, err := List(dir, skip, nil)
	if err != nil {
		return "", err
	}
	return l.Digest()
}

// A Listing is a tree as one walk found it: the entries Digest hashes.
type Listing struct {
	dir  string
	ents []listed
}

type listed struct {
	rel  string
	info fs.FileInfo
}

// List walks dir once (fstree.Walk) for its Digest. visit, when set, sees
// every entry first, with whether it is part of the artifact (not under a
// top-level entry named in skip nor under version-control metadata), and
// may drop it (keep false: a directory is not walked further); a caller
// that removes entries it drops, and changes no other, gets the tree's
// Digest from the Listing without walking it again (issue 42).
func List(dir string, skip []string, visit func(rel string, info fs.FileInfo, inArtifact bool) (keep bool, err error)) (*Listing, error) {
	l := &Listing{dir: dir}
	// outside are the directories whose entries are not the artifact's.
	var outside map[string]bool
	err := fstree.Walk(dir, func(rel string, info fs.FileInfo) (bool, error) {
		in := !(rel == info.Name() && slices.Contains(skip, rel)) && leftOut(info.Name(), info.Mode().Type()) == "" &&
			(outside == nil || !underOutside(rel, outside))
		if visit == nil && !in {
			return false, nil
		}
		if visit != nil {
			keep, err := visit(rel, info, in)
			if err != nil || !keep {
				return false, err
			}
		}
		if in {
			l.ents = append(l.ents, listed{rel, info})
		} else if info.IsDir() {
			if outside == nil {
				outside = map[string]bool{}
			}
			outside[rel] = true
		}
		return true, nil
	})
	return l, err
}

// underOutside reports whether rel lies in one of the directories named.
func underOutside(rel string, outside map[string]bool) bool {
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		if outside[d] {
			return true
		}
	}
	return false
}

// Digest is the listed tree's digest, as Digest gives it.
func (l *Listing) Digest() (string, error) {
	dir, ents := l.dir, slices.Clone(l.ents)
	slices.SortFunc(ents, func(a, b listed) int { return strings.Compare(a.rel, b.rel) })
	h := sha256.New()
	for _, e := range ents {
		rel, info, p := e.rel, e.info, filepath.Join(dir, e.rel)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "l %s %s\n", rel, target)
		case info.IsDir():
			fmt.Fprintf(h, "d %s\n", rel)
		case !info.Mode().IsRegular():
			// Devices, FIFOs and sockets are not part of an artifact (git
			// does not record them), and opening one could block.
			continue
		default:
			sum, err := fileDigest(p, info)
			if err != nil {
				return "", err
			}
			// The owner's executable bit only, as git records it: a view
			// giving a snapshot's files to other users (the exchange) adds
			// their bits without changing the artifact.
			fmt.Fprintf(h, "f %s %o %x\n", rel, info.Mode().Perm()&0o100, sum)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CopyTree copies src into dst (created if missing) by fstree's policy
// (sparse files stay sparse, modes and symlinks kept). It is how roles get
// disposable copies of a candidate. Top-level entries named in skip are not
// copied.
func CopyTree(src, dst string, skip ...string) error {
	return fstree.Copy(src, dst, fstree.Options{Skip: skip, DirBits: 0o700})
}

// Snapshot is CopyTree with hard links in place of file copies: for a view
// nothing can write through (mounted read-only, or checked by Digest after
// the stage and undone from the history), in no time and no space.
func Snapshot(src, dst string, skip ...string) error {
	return fstree.Copy(src, dst, fstree.Options{Skip: skip, DirBits: 0o700, Link: true})
}

// SyncSnapshot makes dst a hard-link snapshot of src, as Snapshot does, but
// reuses what an earlier snapshot left in dst: only the entries that differ
// (another inode, symlink target, type or directory mode) are replaced, and
// whatever src does not have is removed. Linking or unlinking a file changes
// its ctime, which makes every later Digest and git re-read it; a snapshot
// made anew for each stage would have both re-read the whole tree.
func SyncSnapshot(src, dst string, skip ...string) error {
	return syncDir(src, dst, skip)
}

func syncDir(src, dst string, skip []string) error {
	if err := syncDirItself(src, dst); err != nil {
		return err
	}
	// Both sides are stat-ed relative to their directories (fstree.ReadDir).
	ents, err := fstree.ReadDir(src)
	if err != nil {
		return err
	}
	old, err := fstree.ReadDir(dst)
	if err != nil {
		return err
	}
	stale := make(map[string]fs.FileInfo, len(old))
	for _, e := range old {
		stale[e.Name()] = e
	}
	for _, e := range ents {
		name := e.Name()
		if skip != nil && slices.Contains(skip, name) {
			continue
		}
		have, ok := stale[name]
		kept, err := syncEntry(filepath.Join(src, name), filepath.Join(dst, name), e, have, ok)
		if err != nil {
			return err
		}
		if kept {
			delete(stale, name)
		}
	}
	for name := range stale {
		if err := os.RemoveAll(filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return nil
}

// syncDirItself makes dst a directory with src's permissions as Snapshot
// gives them: no group or other write bit, whatever the source has.
func syncDirItself(src, dst string) error {
	sinfo, err := os.Lstat(src)
	if err != nil {
		return err
	}
	mode := (sinfo.Mode().Perm() | 0o700) &^ 0o022
	if dinfo, err := os.Lstat(dst); err == nil && !dinfo.IsDir() {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dst, mode); err != nil {
		return err
	}
	dinfo, err := os.Lstat(dst)
	if err != nil {
		return err
	}
	if dinfo.Mode().Perm() != mode {
		return os.Chmod(dst, mode)
	}
	return nil
}

// syncEntry brings d up to date with s (its stat info; have is d's, when
// exists) and says whether d is part of the snapshot. Devices, FIFOs and
// sockets are not: an entry of that name left in dst is stale.
func syncEntry(s, d string, info, have fs.FileInfo, exists bool) (bool, error) {
	switch {
	case info.IsDir():
		return true, syncDir(s, d, nil)
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(s)
		if err != nil {
			return false, err
		}
		if exists && have.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(d); err == nil && t == target {
				return true, nil
			}
		}
		if err := os.RemoveAll(d); err != nil {
			return false, err
		}
		return true, os.Symlink(target, d)
	case info.Mode().IsRegular():
		if exists && have.Mode().IsRegular() && fstree.SameFile(info, have) {
			return true, nil
		}
		if err := os.RemoveAll(d); err != nil {
			return false, err
		}
		if os.Link(s, d) != nil {
			return true, fstree.CopyFile(s, d, info.Mode().Perm())
		}
		return true, nil
	}
	return false, nil
}
