package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A writable path root owns entirely is shown through an idmapped mount:
// the role reads and writes root's 0600 files as its own, what it makes is
// root's on disk, and no entry it did not touch changes owner or ctime (a
// chown there made every digest, secret scan and git re-read the whole
// workspace after each Developer stage). A writable path with another
// owner's file is still handed over by chown and given back.
func TestAWritablePathRootOwnsIsIdmappedNotChowned(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("hand-over happens only when hoh runs as root")
	}
	root := t.TempDir()
	ws, mixed := filepath.Join(root, "ws"), filepath.Join(root, "mixed")
	for path, mode := range map[string]os.FileMode{"ws/keep.txt": 0o644, "ws/private.txt": 0o600, "ws/sub/deep.txt": 0o600, "mixed/theirs.txt": 0o600} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(path), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Lchown(filepath.Join(mixed, "theirs.txt"), 1234, 1234); err != nil {
		t.Fatal(err)
	}
	untouched := []string{"ws/keep.txt", "ws/sub", "ws/sub/deep.txt"}
	before := map[string]syscall.Timespec{}
	for _, f := range untouched {
		before[f] = statOf(t, filepath.Join(root, f)).Ctim
	}
	time.Sleep(20 * time.Millisecond) // a chown now would show in the ctimes

	v := View{Hide: []string{root, "/tmp"}, Write: []string{ws, mixed}}
	out, code := runConfined(t, v, ws, `cat private.txt sub/deep.txt && echo x >> private.txt && echo n > new.txt && mkdir made && echo m > made/f &&
		echo "owner $(stat -c %u private.txt)" && cat ../mixed/theirs.txt && echo y >> ../mixed/theirs.txt && echo ok`)
	want := fmt.Sprintf("ws/private.txtws/sub/deep.txtowner %d\nmixed/theirs.txtok", RoleUID)
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d: %q, want it to hold %q", code, out, want)
	}
	for _, f := range untouched {
		if statOf(t, filepath.Join(root, f)).Ctim != before[f] {
			t.Errorf("%s changed ctime though the role did not touch it (chowned?)", f)
		}
	}
	for f, uid := range map[string]uint32{"ws/private.txt": 0, "ws/new.txt": 0, "ws/made": 0, "ws/made/f": 0, "mixed/theirs.txt": 1234, "mixed": 0} {
		if st := statOf(t, filepath.Join(root, f)); st.Uid != uid || st.Gid != uid {
			t.Errorf("%s is owned by %d:%d on disk after the invocation, want %d:%d", f, st.Uid, st.Gid, uid, uid)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "private.txt")); string(got) != "ws/private.txtx\n" {
		t.Errorf("the role's write did not reach the disk: %q", got)
	}
}

func statOf(t *testing.T, p string) syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// A project's layout: the CLI's state directory and a shown 0600 file lie
// inside the writable workspace. Whatever is chowned (a shown file, or a
// workspace holding another owner's file) must not leave a nested idmapped
// path showing its files as nobody's: each owner is read before any
// changes, and a path inside a chowned one is chowned too.
func TestNestedViewPathsStayReadableWhicheverIsIdmapped(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("hand-over happens only when hoh runs as root")
	}
	for _, otherOwner := range []bool{false, true} {
		t.Run(fmt.Sprintf("another owner in the workspace %v", otherOwner), func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "app")
			state, spec := filepath.Join(ws, ".git/hoh/state"), filepath.Join(ws, ".git/hoh/spec.md")
			for p, text := range map[string]string{filepath.Join(state, "config.toml"): "config", spec: "spec", filepath.Join(ws, "main.go"): "main"} {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if otherOwner {
				if err := os.Lchown(filepath.Join(ws, "main.go"), 1234, 1234); err != nil {
					t.Fatal(err)
				}
			}
			v := View{Hide: []string{filepath.Dir(ws), "/tmp"}, Show: []string{spec}, Write: []string{state, ws}}
			out, code := runConfined(t, v, ws, `cat .git/hoh/state/config.toml .git/hoh/spec.md main.go && echo new > .git/hoh/state/new && echo ok`)
			if code != 0 || !strings.Contains(out, "configspecmainok") {
				t.Fatalf("exit %d: %q", code, out)
			}
			for p, uid := range map[string]uint32{filepath.Join(state, "config.toml"): 0, spec: 0, filepath.Join(state, "new"): 0, filepath.Join(ws, "main.go"): map[bool]uint32{false: 0, true: 1234}[otherOwner]} {
				if st := statOf(t, p); st.Uid != uid {
					t.Errorf("%s is owned by %d after the invocation, want %d", p, st.Uid, uid)
				}
			}
		})
	}
}

// A read-only mount AsRole shows a tree root owns at another path as the
// role's: its 0600 files and 0700 directories are readable as they were to
// the role that wrote them, nothing can be written there, and no entry on
// disk changes owner or ctime (nothing was chowned, or walked to decide).
func TestAReadOnlyMountAsRoleShowsRootsFilesAsTheRoles(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("hand-over happens only when hoh runs as root")
	}
	root := t.TempDir()
	ws, view := filepath.Join(root, "workspace"), filepath.Join(root, "iter-01", "planner", "artifact")
	for path, mode := range map[string]os.FileMode{"keep.txt": 0o644, "private.txt": 0o600, "closed/deep.txt": 0o600} {
		p := filepath.Join(ws, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(path), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(ws, "closed"), 0o700); err != nil {
		t.Fatal(err)
	}
	before := map[string]syscall.Stat_t{}
	for _, f := range []string{".", "keep.txt", "private.txt", "closed", "closed/deep.txt"} {
		before[f] = statOf(t, filepath.Join(ws, f))
	}
	if err := os.MkdirAll(view, 0o755); err != nil { // the working directory's place on the host
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a chown now would show in the ctimes

	v := View{Hide: []string{root, "/tmp"}, Mounts: []Mount{{Source: ws, Target: view, AsRole: true}}}
	out, code := runConfined(t, v, view, `cat keep.txt private.txt closed/deep.txt && echo "owner $(stat -c %u private.txt)" &&
		if (echo x >> private.txt) 2>/dev/null || touch new.txt 2>/dev/null; then echo WROTE; fi; echo done`)
	want := fmt.Sprintf("keep.txtprivate.txtclosed/deep.txtowner %d\ndone", RoleUID)
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "WROTE") {
		t.Fatalf("exit %d: %q, want it to hold %q and no write", code, out, want)
	}
	for f, st := range before {
		after := statOf(t, filepath.Join(ws, f))
		if after.Ctim != st.Ctim || after.Uid != 0 || after.Gid != 0 {
			t.Errorf("%s: ctime %v -> %v, owner %d:%d: the role's view changed it on disk", f, st.Ctim, after.Ctim, after.Uid, after.Gid)
		}
	}
	if ents, err := os.ReadDir(view); err != nil || len(ents) != 0 {
		t.Errorf("the mount's place on the host holds %v (%v), want nothing", ents, err)
	}
}
