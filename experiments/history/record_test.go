package history

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// agentGit runs git as an agent would in dir: its own repository, no
// environment of hoh's.
func agentGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=agent", "-c", "user.email=agent@x",
		"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v: %s", args, dir, err, out)
	}
}

func put(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "ws")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(filepath.Join(dir, "history.git"), work)
	if err != nil {
		t.Fatal(err)
	}
	return r, work
}

// recordAndExport records the workspace, exports the commit and checks
// that the export holds the workspace's artifact (same Digest) and the
// files named in want with their contents.
func recordAndExport(t *testing.T, r *Repo, want map[string]string) (Recorded, string) {
	t.Helper()
	rec, err := r.Record("developer")
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	out := t.TempDir()
	if err := r.Export(rec.Commit, out); err != nil {
		t.Fatalf("export: %v", err)
	}
	for rel, content := range want {
		b, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil || string(b) != content {
			t.Errorf("export %q = %q, %v; want %q", rel, b, err, content)
		}
	}
	dw, _ := Digest(r.Work, r.Exclude...)
	de, _ := Digest(out)
	if dw != de {
		t.Errorf("the export's digest %s differs from the workspace's %s", de, dw)
	}
	// The evaluator's incremental checkout sees the same files.
	co := t.TempDir()
	if err := r.Checkout(rec.Commit, co, filepath.Join(t.TempDir(), "index")); err != nil {
		t.Fatalf("checkout: %v", err)
	}
	if dc, _ := Digest(co); dc != dw {
		t.Errorf("the checkout's digest %s differs from the workspace's %s", dc, dw)
	}
	return rec, out
}

// treeModes lists the tree of commit as "mode path" lines.
func treeModes(t *testing.T, r *Repo, commit string) string {
	t.Helper()
	out, err := r.Git("ls-tree", "-r", "--full-tree", commit)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A Developer that runs `git init sub` (as cargo new and many scaffolders
// do), with or without commits in it: its files are recorded as plain files,
// never as a gitlink, and the nested .git is listed as metadata.
func TestRecordKeepsANestedRepositoryAsPlainFiles(t *testing.T) {
	for _, commits := range []bool{false, true} {
		r, work := newRepo(t)
		put(t, filepath.Join(work, "main.py"), "print(1)\n")
		agentGit(t, work, "init", "--quiet", "sub")
		put(t, filepath.Join(work, "sub", "lib.py"), "x = 1\n")
		if commits {
			agentGit(t, filepath.Join(work, "sub"), "add", "lib.py")
			agentGit(t, filepath.Join(work, "sub"), "commit", "--quiet", "-m", "agent's commit")
		}
		rec, out := recordAndExport(t, r, map[string]string{"main.py": "print(1)\n", "sub/lib.py": "x = 1\n"})
		if !slices.Equal(rec.Metadata, []string{"sub/.git"}) || len(rec.Refused) != 0 {
			t.Errorf("commits %v: metadata %q, refused %q", commits, rec.Metadata, rec.Refused)
		}
		if tree := treeModes(t, r, rec.Commit); strings.Contains(tree, "160000") || strings.Contains(tree, ".git") {
			t.Errorf("commits %v: the tree holds a gitlink or a .git:\n%s", commits, tree)
		}
		if _, err := os.Lstat(filepath.Join(out, "sub", ".git")); !os.IsNotExist(err) {
			t.Errorf("commits %v: the export has sub/.git (%v)", commits, err)
		}
		// The agent's repository stays in the workspace, and a later
		// change inside it is recorded.
		put(t, filepath.Join(work, "sub", "lib.py"), "x = 2\n")
		recordAndExport(t, r, map[string]string{"sub/lib.py": "x = 2\n"})
		if _, err := os.Stat(filepath.Join(work, "sub", ".git", "HEAD")); err != nil {
			t.Errorf("commits %v: the agent's nested repository was touched: %v", commits, err)
		}
	}
}

// A submodule the agent adds in its own repository (.gitmodules, a .git
// file pointing into the top-level .git/modules): .gitmodules and the
// submodule's files are recorded as plain files.
func TestRecordKeepsASubmoduleAsPlainFiles(t *testing.T) {
	r, work := newRepo(t)
	upstream := filepath.Join(t.TempDir(), "upstream")
	put(t, filepath.Join(upstream, "vendored.c"), "int v;\n")
	agentGit(t, upstream, "init", "--quiet")
	agentGit(t, upstream, "add", ".")
	agentGit(t, upstream, "commit", "--quiet", "-m", "upstream")
	put(t, filepath.Join(work, "main.c"), "int main(){}\n")
	agentGit(t, work, "init", "--quiet")
	agentGit(t, work, "submodule", "--quiet", "add", upstream, "third_party/up")
	if st, err := os.Lstat(filepath.Join(work, "third_party", "up", ".git")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("the submodule has no .git file: %v", err)
	}
	rec, _ := recordAndExport(t, r, map[string]string{"main.c": "int main(){}\n", "third_party/up/vendored.c": "int v;\n"})
	if _, err := os.Stat(filepath.Join(work, ".gitmodules")); err != nil {
		t.Fatal(err)
	}
	if tree := treeModes(t, r, rec.Commit); !strings.Contains(tree, "\t.gitmodules") || strings.Contains(tree, "160000") {
		t.Errorf("the tree lacks .gitmodules or holds a gitlink:\n%s", tree)
	}
	if !slices.Equal(rec.Metadata, []string{".git", "third_party/up/.git"}) {
		t.Errorf("metadata %q", rec.Metadata)
	}
}

// Ignored files are part of the artifact: neither the agent's .gitignore,
// nor a nested one, nor the history's info/exclude, nor the user's global
// excludes file or config hide them from a checkpoint, and a restore keeps
// them.
func TestRecordKeepsIgnoredFiles(t *testing.T) {
	home := t.TempDir()
	put(t, filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = "+filepath.Join(home, "ignore")+"\n[status]\n\tshowUntrackedFiles = no\n")
	put(t, filepath.Join(home, "ignore"), "*.bin\n")
	put(t, filepath.Join(home, ".config", "git", "ignore"), "*.log\n")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	r, work := newRepo(t)
	put(t, filepath.Join(r.GitDir, "info", "exclude"), "*.o\n")
	put(t, filepath.Join(work, ".gitignore"), "build/\n*\n")
	put(t, filepath.Join(work, "src", ".gitignore"), "*.gen\n")
	files := map[string]string{"build/app": "ELF", "src/a.gen": "gen", "x.bin": "bin", "x.log": "log", "x.o": "obj", ".gitignore": "build/\n*\n"}
	for rel, c := range files {
		put(t, filepath.Join(work, rel), c)
	}
	rec, _ := recordAndExport(t, r, files)
	if err := r.Restore(rec.Commit); err != nil {
		t.Fatal(err)
	}
	for rel := range files {
		if _, err := os.Stat(filepath.Join(work, rel)); err != nil {
			t.Errorf("restore removed %s: %v", rel, err)
		}
	}
}

// Names that are awkward for a shell or for git's own text formats are
// recorded and exported byte for byte.
func TestRecordKeepsOddNames(t *testing.T) {
	r, work := newRepo(t)
	names := []string{"new\nline.txt", "bad\xff\xfeutf8", "-rf", "--all", "dir/-n", "tab\tand space",
		"git~1", ".git.", "back\\slash", "*glob?[x]", ":(exclude)magic", "quote\"d", "\x01ctrl", ".gitmodules.txt"}
	want := map[string]string{}
	for i, n := range names {
		want[n] = strings.Repeat("x", i)
		put(t, filepath.Join(work, n), want[n])
	}
	rec, out := recordAndExport(t, r, want)
	if len(rec.Refused) != 0 || len(rec.Metadata) != 0 {
		t.Errorf("refused %q, metadata %q", rec.Refused, rec.Metadata)
	}
	// Removing them is recorded too.
	for _, n := range names[:4] {
		os.Remove(filepath.Join(work, n))
	}
	rec2, _ := recordAndExport(t, r, nil)
	out2 := t.TempDir()
	if err := r.Export(rec2.Commit, out2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(out2, names[0])); !os.IsNotExist(err) {
		t.Errorf("a removed file is still in the next checkpoint (%v)", err)
	}
	_ = out
}

// What git cannot hold (a .GIT directory, a symbolic link named
// .gitmodules) is left out and named, quoted; the rest is recorded.
func TestRecordNamesWhatItCannotHold(t *testing.T) {
	r, work := newRepo(t)
	put(t, filepath.Join(work, "ok.txt"), "ok")
	put(t, filepath.Join(work, "d", ".GIT", "config"), "x")
	put(t, filepath.Join(work, "odd\n", ".Git"), "x")
	// (git keeps no empty directory: these keep d and odd\n in the tree.)
	put(t, filepath.Join(work, "d", "keep"), "k")
	put(t, filepath.Join(work, "odd\n", "keep"), "k")
	if err := os.Symlink("ok.txt", filepath.Join(work, ".gitmodules")); err != nil {
		t.Fatal(err)
	}
	rec, _ := recordAndExport(t, r, map[string]string{"ok.txt": "ok"})
	got := strings.Join(rec.Refused, "\n")
	for _, want := range []string{`"d/.GIT"`, `"odd\n/.Git"`, `".gitmodules": git cannot hold a symbolic link`} {
		if !strings.Contains(got, want) {
			t.Errorf("refused %q lacks %s", rec.Refused, want)
		}
	}
}

// A type change (file to directory and back), a deleted file and a gitlink
// an older hoh left in the index are all brought to what is on disk.
func TestRecordFollowsTypeChangesAndOldGitlinks(t *testing.T) {
	r, work := newRepo(t)
	put(t, filepath.Join(work, "a"), "file")
	put(t, filepath.Join(work, "b", "c"), "in dir")
	put(t, filepath.Join(work, "gone"), "x")
	if _, err := r.Record("1"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(work, "a"))
	os.RemoveAll(filepath.Join(work, "b"))
	os.Remove(filepath.Join(work, "gone"))
	put(t, filepath.Join(work, "a", "inner"), "now a dir")
	put(t, filepath.Join(work, "b"), "now a file")
	put(t, filepath.Join(work, "sub", "s"), "s")
	head := r.Head()
	if _, err := r.Git("update-index", "--add", "--cacheinfo", "160000,"+head+",sub"); err != nil {
		t.Fatal(err)
	}
	rec, _ := recordAndExport(t, r, map[string]string{"a/inner": "now a dir", "b": "now a file", "sub/s": "s"})
	tree := treeModes(t, r, rec.Commit)
	if strings.Contains(tree, "160000") || strings.Contains(tree, "\tgone") {
		t.Errorf("tree:\n%s", tree)
	}
}

// A large sparse file is recorded and exported with its bytes; the digest
// of the export (holes written as zeros) is the workspace's.
func TestRecordKeepsASparseFile(t *testing.T) {
	r, work := newRepo(t)
	p := filepath.Join(work, "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 48 << 20
	if _, err := f.WriteAt([]byte("head"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("tail"), size-4); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, out := recordAndExport(t, r, nil)
	b, err := os.ReadFile(filepath.Join(out, "disk.img"))
	if err != nil || len(b) != size || !bytes.HasPrefix(b, []byte("head")) || !bytes.HasSuffix(b, []byte("tail")) {
		t.Errorf("exported image: %d bytes, %v", len(b), err)
	}
}

// A git that cannot write is hoh's fault: Record fails rather than
// recording an empty artifact with every path "refused".
func TestRecordFailsWhenGitCannotWrite(t *testing.T) {
	r, work := newRepo(t)
	put(t, filepath.Join(work, "a"), "a")
	put(t, filepath.Join(work, "b"), "b")
	// An object store that is a file: nothing can be written, even by root.
	objects := filepath.Join(r.GitDir, "objects")
	if err := os.Rename(objects, objects+".kept"); err != nil {
		t.Fatal(err)
	}
	put(t, objects, "not a directory")
	if rec, err := r.Record("x"); err == nil {
		t.Errorf("recorded %+v with an unwritable object store", rec)
	}
}

// BenchmarkRecordOneChangeIn20kFiles records a 20,000-file workspace in
// which one file changed, and reports the ratio of Record's time to that of
// git add --all (the staging hoh used before, which fails on a nested
// repository) on the same workspace.
func BenchmarkRecordOneChangeIn20kFiles(b *testing.B) {
	dir := b.TempDir()
	work := filepath.Join(dir, "ws")
	for i := range 200 {
		for j := range 100 {
			p := filepath.Join(work, "d"+strconv.Itoa(i), "f"+strconv.Itoa(j)+".txt")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(p), 0o644)
		}
	}
	r, err := Open(filepath.Join(dir, "h.git"), work)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Record("0"); err != nil {
		b.Fatal(err)
	}
	changed := filepath.Join(work, "d0", "f0.txt")
	var rec, add time.Duration
	b.ResetTimer()
	for i := range b.N {
		os.WriteFile(changed, []byte(strconv.Itoa(i)), 0o644)
		began := time.Now()
		if _, err := r.Record("r"); err != nil {
			b.Fatal(err)
		}
		rec += time.Since(began)
		os.WriteFile(changed, []byte("a"+strconv.Itoa(i)), 0o644)
		began = time.Now()
		if _, err := r.git(nil, "add", "--all", "--force", "--", "."); err != nil {
			b.Fatal(err)
		}
		if _, err := r.git(nil, "commit", "--quiet", "--allow-empty", "-m", "a"); err != nil {
			b.Fatal(err)
		}
		add += time.Since(began)
	}
	b.ReportMetric(float64(rec)/float64(add), "record/git-add")
}

// Restoring the commit a nested repository was recorded in keeps the
// agent's repository (its .git is not hoh's to undo); restoring one from
// before it existed removes the whole directory, .git included.
func TestRestoreAroundANestedRepository(t *testing.T) {
	r, work := newRepo(t)
	put(t, filepath.Join(work, "a"), "a")
	before, err := r.Record("before")
	if err != nil {
		t.Fatal(err)
	}
	agentGit(t, work, "init", "--quiet", "sub")
	put(t, filepath.Join(work, "sub", "lib.py"), "x = 1\n")
	with, err := r.Record("with")
	if err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(work, "sub", "lib.py"), "tampered\n")
	if err := r.Restore(with.Commit); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "sub", "lib.py")); string(b) != "x = 1\n" {
		t.Errorf("sub/lib.py after restore: %q", b)
	}
	if _, err := os.Stat(filepath.Join(work, "sub", ".git", "HEAD")); err != nil {
		t.Errorf("restore removed the agent's nested repository: %v", err)
	}
	if err := r.Restore(before.Commit); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(work, "sub")); !os.IsNotExist(err) {
		t.Errorf("restore to before the nested repository left sub (%v)", err)
	}
}

// CommitIndex commits the index, not the work tree (it never refreshes
// it), each commit on the last with its message's first line as the
// subject; the first has no parent, and a HEAD that cannot be read fails
// the commit rather than starting a new root.
func TestCommitIndexChainsCommitsOfTheIndex(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	put(t, filepath.Join(ws, "a.txt"), "one")
	r, err := Open(filepath.Join(dir, "git"), ws)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Commit("first")
	if err != nil {
		t.Fatal(err)
	}
	if parents, _ := r.Git("rev-list", "--parents", "-n1", first); parents != first {
		t.Fatalf("the first commit has parents: %q", parents)
	}
	put(t, filepath.Join(ws, "a.txt"), "two, not staged")
	second, err := r.CommitIndex("second\n\nwith a body")
	if err != nil {
		t.Fatal(err)
	}
	if parents, _ := r.Git("rev-list", "--parents", "-n1", second); parents != second+" "+first {
		t.Fatalf("second's parents: %q, want %s", parents, first)
	}
	if got, _ := r.Git("show", second+":a.txt"); got != "one" {
		t.Fatalf("CommitIndex committed the work tree: a.txt is %q", got)
	}
	if log, _ := r.Log(); len(log) != 2 || log[1].Subject != "second" || r.Head() != second {
		t.Fatalf("log %+v, head %s", log, r.Head())
	}
	ref, _ := r.Git("symbolic-ref", "HEAD")
	if err := os.WriteFile(filepath.Join(r.GitDir, ref), []byte("not a commit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := r.CommitIndex("third"); err == nil || !strings.Contains(err.Error(), "HEAD names no commit") {
		t.Fatalf("a HEAD that cannot be read: commit %s, error %v", c, err)
	}
}
