package history

import (
	"bufio"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCommitTagExportRestore(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	os.MkdirAll(work, 0o755)
	r, err := Open(filepath.Join(root, "history.git"), work)
	if err != nil {
		t.Fatal(err)
	}
	write(t, work, "a.txt", "one")
	// A .gitignore written by the agent must not hide files from the history.
	write(t, work, ".gitignore", "*.log\n")
	write(t, work, "build.log", "kept")
	c1, err := r.Commit("developer t=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Tag("cp-1", c1); err != nil {
		t.Fatal(err)
	}
	d1, _ := Digest(work)
	write(t, work, "a.txt", "two")
	write(t, work, "new/b.txt", "b")
	c2, _ := r.Commit("developer t=2")
	r.Tag("cp-2", c2)

	out := filepath.Join(root, "export")
	os.MkdirAll(out, 0o755)
	if err := r.Export("cp-1", out); err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(out); d != d1 {
		t.Fatalf("exported cp-1 digest %s, want %s", d, d1)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "build.log")); string(b) != "kept" {
		t.Fatalf("ignored file lost from history: %q", b)
	}
	write(t, work, "stray.txt", "x")
	if err := r.Restore("cp-1"); err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(work); d != d1 {
		t.Fatal("restore did not bring the workspace back to cp-1")
	}
	log, err := r.Log()
	if err != nil || len(log) != 2 || log[0].Subject != "developer t=1" || len(log[1].Tags) != 1 || log[1].Tags[0] != "cp-2" {
		t.Fatalf("log %+v %v", log, err)
	}
	if _, err := os.Stat(filepath.Join(work, ".git")); !os.IsNotExist(err) {
		t.Fatal("the git directory must live outside the workspace")
	}
}

func TestDigestSeesContentModeAndNames(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, "x/y.txt", "same")
	write(t, b, "x/y.txt", "same")
	da, _ := Digest(a)
	db, _ := Digest(b)
	if da != db {
		t.Fatal("identical trees must have identical digests")
	}
	os.Chmod(filepath.Join(b, "x/y.txt"), 0o755)
	if db2, _ := Digest(b); db2 == da {
		t.Fatal("executable bit change not seen")
	}
	os.Chmod(filepath.Join(b, "x/y.txt"), 0o644)
	write(t, b, "x/y.txt", "diff")
	if db3, _ := Digest(b); db3 == da {
		t.Fatal("content change not seen")
	}
	c := t.TempDir()
	CopyTree(a, c)
	if dc, _ := Digest(c); dc != da {
		t.Fatal("CopyTree must preserve the digest")
	}
}

// A git killed mid-commit leaves index.lock, and every later git call of
// the trial fails until it is removed; it is removed only when no process
// works on the git directory.
func TestStaleLocksOfAKilledGitAreRemoved(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "ws")
	os.MkdirAll(work, 0o755)
	r, err := Open(filepath.Join(dir, "h.git"), work)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("first"); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.GitDir, "index.lock")
	os.WriteFile(lock, nil, 0o644)
	if _, err := r.Commit("blocked"); err == nil {
		t.Fatal("git committed despite index.lock: the test no longer shows the fault")
	}
	// The holder says it is ready only once it runs with GIT_DIR (right
	// after Start returns, the exec may not have set its environment yet),
	// then waits on a stdin that never ends, in that same process.
	holder := exec.Command("sh", "-c", "echo ready; read never")
	holder.Env = append(os.Environ(), "GIT_DIR="+r.GitDir)
	ready, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(ready).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("holder did not start: %q %v", line, err)
	}
	_, err = r.RemoveStaleLocks()
	holder.Process.Kill()
	holder.Wait()
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("a lock of a live process was not kept: %v", err)
	}
	removed, err := r.RemoveStaleLocks()
	if err != nil || len(removed) != 1 || removed[0] != lock {
		t.Fatalf("removed %v, %v", removed, err)
	}
	if _, err := r.Commit("after"); err != nil {
		t.Fatalf("commit after the repair: %v", err)
	}
}

// Codex's sandbox leaves an empty .git in the workspace when killed; a
// restore removes it so the digests are those of the artifact.
func TestRestoreRemovesAnEmptyTransientGitDir(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "ws")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a"), 0o644)
	r, err := Open(filepath.Join(dir, "h.git"), work)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit("first")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Digest(work)
	os.Mkdir(filepath.Join(work, ".git"), 0o755)
	// Version-control metadata is not part of the artifact (see Record).
	if d, _ := Digest(work); d != want {
		t.Errorf("an empty .git changed the digest: %s, want %s", d, want)
	}
	if err := r.Restore(c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(work, ".git")); !os.IsNotExist(err) {
		t.Errorf("the empty .git is still there after restore (%v)", err)
	}
	if d, _ := Digest(work); d != want {
		t.Errorf("digest after restore %s, want %s", d, want)
	}
}

// What an agent plants in the workspace does not reach a checkpoint's copy
// or export, nor make hoh run anything: a FIFO (which would block a naive
// copy or digest), a setuid executable, a symlink out of the workspace, a
// .gitattributes asking for a filter and an end-of-line conversion, and
// hooks in the history repository.
func TestPlantedFilesDoNotReachCheckpoints(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	os.MkdirAll(work, 0o755)
	gitDir := filepath.Join(root, "history.git")
	r, err := Open(gitDir, work)
	if err != nil {
		t.Fatal(err)
	}
	write(t, work, "a.txt", "line\n")
	write(t, work, "tool", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(work, "tool"), 0o4755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("mkfifo", filepath.Join(work, "pipe")).Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(work, "out")); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(root, "RAN")
	write(t, work, ".gitattributes", "* filter=evil text eol=crlf\n")
	exec.Command("git", "--git-dir", gitDir, "config", "filter.evil.clean", "touch "+ran+"; cat").Run()
	write(t, gitDir, "hooks/pre-commit", "#!/bin/sh\ntouch "+ran+"\n")
	write(t, gitDir, "hooks/post-commit", "#!/bin/sh\ntouch "+ran+"\n")
	os.Chmod(filepath.Join(gitDir, "hooks/pre-commit"), 0o755)
	os.Chmod(filepath.Join(gitDir, "hooks/post-commit"), 0o755)

	d, err := Digest(work) // returns: the FIFO is not opened
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit("developer")
	if err != nil {
		t.Fatal(err)
	}
	r.Tag("cp-1", c)
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a hook or filter planted by the agent ran")
	}
	for name, dst := range map[string]string{"copy": filepath.Join(root, "copy"), "export": filepath.Join(root, "export")} {
		if name == "copy" {
			err = CopyTree(work, dst)
		} else {
			os.MkdirAll(dst, 0o755)
			err = r.Export("cp-1", dst)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := os.Lstat(filepath.Join(dst, "pipe")); !os.IsNotExist(err) {
			t.Errorf("%s: the FIFO was carried over", name)
		}
		fi, err := os.Stat(filepath.Join(dst, "tool"))
		if err != nil || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 || fi.Mode().Perm()&0o100 == 0 {
			t.Errorf("%s: tool mode %v (%v): want executable without setuid", name, fi, err)
		}
		if target, err := os.Readlink(filepath.Join(dst, "out")); err != nil || target != "/etc/hostname" {
			t.Errorf("%s: the symlink was followed or lost: %q %v", name, target, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "a.txt")); string(b) != "line\n" {
			t.Errorf("%s: content converted: %q", name, b)
		}
		if got, _ := Digest(dst); got != d {
			t.Errorf("%s: digest %s, workspace %s", name, got, d)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a filter planted by the agent ran on checkout")
	}
}

// ctimes are the change times of the regular files under dir.
func ctimes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			var st syscall.Stat_t
			syscall.Lstat(p, &st)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = st.Ctim.Nano()
		}
		return nil
	})
	return out
}

// A kept snapshot brought up to date is what a fresh Snapshot would be
// (same digest, every file a link of the source's), whatever was left in
// it; files that did not change are not re-linked (their ctime, which
// digests and git compare, stays); and nothing a stale entry points to
// outside the snapshot is written.
func TestSyncSnapshotEqualsAFreshSnapshot(t *testing.T) {
	src, dst, outside := t.TempDir(), filepath.Join(t.TempDir(), "snap"), t.TempDir()
	os.MkdirAll(filepath.Join(src, "keep", "deep"), 0o755)
	os.WriteFile(filepath.Join(src, "keep", "deep", "same.txt"), []byte("same"), 0o644)
	os.WriteFile(filepath.Join(src, "edit.txt"), []byte("v1"), 0o644)
	os.WriteFile(filepath.Join(src, "untouched.txt"), []byte("u"), 0o644)
	os.WriteFile(filepath.Join(src, "gone.txt"), []byte("gone"), 0o644)
	os.WriteFile(filepath.Join(src, "becomes-dir"), []byte("file"), 0o644)
	os.Symlink("keep", filepath.Join(src, "link"))
	os.MkdirAll(filepath.Join(src, ".git"), 0o755)
	os.WriteFile(filepath.Join(src, ".git", "x"), []byte("excluded"), 0o644)
	check := func(what string) {
		t.Helper()
		want, _ := Digest(src, ".git")
		got, err := Digest(dst)
		if err != nil || got != want {
			t.Fatalf("%s: snapshot digest %s (%v), source %s", what, got, err, want)
		}
		filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(dst, p)
				a, _ := os.Lstat(p)
				b, _ := os.Lstat(filepath.Join(src, rel))
				if !os.SameFile(a, b) {
					t.Errorf("%s: %s is not a link of the source's file", what, rel)
				}
			}
			return nil
		})
		if _, err := os.Lstat(filepath.Join(dst, ".git")); !os.IsNotExist(err) {
			t.Fatalf("%s: the excluded .git is in the snapshot", what)
		}
	}
	if err := SyncSnapshot(src, dst, ".git"); err != nil {
		t.Fatal(err)
	}
	check("first")
	before := ctimes(t, src)
	time.Sleep(20 * time.Millisecond)

	// The source changes; the snapshot gets leftovers a role could leave.
	os.WriteFile(filepath.Join(src, "edit.txt"), []byte("v2, longer"), 0o644) // same inode
	os.Remove(filepath.Join(src, "gone.txt"))
	os.Remove(filepath.Join(src, "becomes-dir"))
	os.MkdirAll(filepath.Join(src, "becomes-dir"), 0o755)
	os.WriteFile(filepath.Join(src, "becomes-dir", "new.txt"), []byte("new"), 0o644)
	os.Remove(filepath.Join(src, "link"))
	os.Symlink("edit.txt", filepath.Join(src, "link"))
	os.WriteFile(filepath.Join(dst, "planted.txt"), []byte("x"), 0o644)
	syscall.Mkfifo(filepath.Join(dst, "fifo"), 0o644)
	os.Remove(filepath.Join(dst, "keep", "deep", "same.txt"))
	os.WriteFile(filepath.Join(dst, "keep", "deep", "same.txt"), []byte("fake"), 0o644) // another inode
	os.Symlink(outside, filepath.Join(dst, "becomes-dir2"))
	os.MkdirAll(filepath.Join(src, "becomes-dir2"), 0o755)
	os.WriteFile(filepath.Join(src, "becomes-dir2", "f"), []byte("f"), 0o644)
	if err := SyncSnapshot(src, dst, ".git"); err != nil {
		t.Fatal(err)
	}
	check("resync")
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the resync wrote through a symlink left in the snapshot: %v", ents)
	}
	if after := ctimes(t, src); after["untouched.txt"] != before["untouched.txt"] {
		t.Fatal("the resync re-linked a file that changed nowhere")
	}
	before2 := ctimes(t, src)
	time.Sleep(20 * time.Millisecond)
	if err := SyncSnapshot(src, dst, ".git"); err != nil {
		t.Fatal(err)
	}
	check("unchanged")
	if after := ctimes(t, src); !maps.Equal(after, before2) {
		t.Fatalf("a resync of an unchanged source touched its files: ctimes %v -> %v", before2, after)
	}
}

// Checkout with a kept index brings a copy from one checkpoint to the next
// as a fresh Export would (same digest), whatever the copy's user did to it
// in between: a same-size rewrite with its mtime put back, an exec bit,
// new files and directories, a .git, a FIFO, a directory swapped for a
// symlink out of the copy (nothing is written through it). Files that did
// not change between the checkpoints are not written again.
func TestCheckoutWithAKeptIndexEqualsAFreshExport(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	r, err := Open(filepath.Join(root, "history.git"), work)
	os.MkdirAll(work, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	write(t, work, "same.txt", "same")
	write(t, work, "edit.txt", "v1")
	write(t, work, "dir/in.txt", "in")
	write(t, work, "gone.txt", "gone")
	c1, _ := r.Commit("1")
	write(t, work, "edit.txt", "v2")
	os.Remove(filepath.Join(work, "gone.txt"))
	write(t, work, "new.txt", "new")
	c2, _ := r.Commit("2")
	fresh := func(ref string) string {
		t.Helper()
		d := filepath.Join(t.TempDir(), "x")
		os.MkdirAll(d, 0o755)
		if err := r.Export(ref, d); err != nil {
			t.Fatal(err)
		}
		s, _ := Digest(d)
		return s
	}
	out, idx, outside := filepath.Join(root, "out"), filepath.Join(root, "out.index"), t.TempDir()
	os.MkdirAll(out, 0o700)
	if err := r.Checkout(c1, out, idx); err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(out); d != fresh(c1) {
		t.Fatal("the first checkout is not the checkpoint")
	}
	time.Sleep(1100 * time.Millisecond) // past the index's second: no entry is racily clean
	// What an evaluator could leave.
	st, _ := os.Stat(filepath.Join(out, "same.txt"))
	os.WriteFile(filepath.Join(out, "same.txt"), []byte("SAME"), 0o644)
	os.Chtimes(filepath.Join(out, "same.txt"), st.ModTime(), st.ModTime())
	os.Chmod(filepath.Join(out, "edit.txt"), 0o755)
	write(t, out, "build/obj.o", "x")
	write(t, out, ".git/config", "[core]\n")
	write(t, out, "dir/.git/HEAD", "x")
	syscall.Mkfifo(filepath.Join(out, "fifo"), 0o644)
	os.RemoveAll(filepath.Join(out, "dir"))
	os.Symlink(outside, filepath.Join(out, "dir"))
	if err := r.Checkout(c1, out, idx); err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(out); d != fresh(c1) {
		ents, _ := os.ReadDir(out)
		t.Fatalf("checkout over an evaluator's leftovers is not the checkpoint: %v", ents)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the checkout wrote through a symlink: %v", ents)
	}
	time.Sleep(1100 * time.Millisecond)
	before := ctimes(t, out)
	if err := r.Checkout(c2, out, idx); err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(out); d != fresh(c2) {
		t.Fatal("the checkout of the next checkpoint is not it")
	}
	after := ctimes(t, out)
	if after["same.txt"] != before["same.txt"] || after["dir/in.txt"] != before["dir/in.txt"] {
		t.Fatal("files unchanged between the checkpoints were written again")
	}
	if after["edit.txt"] == before["edit.txt"] {
		t.Fatal("the changed file was not written")
	}
}

// List's visit sees every entry, the excluded and the metadata ones too
// (a secret scan must), and a digest of the listing is Digest's, with the
// entries visit dropped left out.
func TestListSeesEverythingAndDigestsTheArtifact(t *testing.T) {
	dir := t.TempDir()
	for rel, body := range map[string]string{
		"a.txt": "a", "sub/b.txt": "b", "sub/.git/config": "nested", "state/s.json": "{}", "drop.bin": "big",
		"sub/keep/c.txt": "c",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := map[string]bool{}
	l, err := List(dir, []string{"state"}, func(rel string, info fs.FileInfo, inArtifact bool) (bool, error) {
		in[rel] = inArtifact
		if rel == "drop.bin" {
			return false, os.Remove(filepath.Join(dir, rel))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"a.txt": true, "sub/b.txt": true, "sub/keep/c.txt": true, "drop.bin": true,
		"sub/.git": false, "sub/.git/config": false, "state": false, "state/s.json": false} {
		got, seen := in[rel]
		if !seen || got != want {
			t.Errorf("%s: visited %v, in the artifact %v; want visited, in the artifact %v", rel, seen, got, want)
		}
	}
	got, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Digest(dir, "state")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("the listing's digest %s, Digest's %s", got, want)
	}
	all, _ := Digest(dir)
	if all == want {
		t.Fatal("the excluded entry made no difference to Digest")
	}
}
