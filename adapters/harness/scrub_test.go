package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestScrubSecrets(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "snap.sh")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("export KEY=sk-secret-1\nexport OTHER=x\n"), 0o600)
	clean := filepath.Join(dir, "clean.txt")
	os.WriteFile(clean, []byte("nothing here"), 0o644)
	if err := ScrubSecrets(dir, []string{"sk-secret-1", "x"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "export KEY=[REDACTED]\nexport OTHER=x\n" {
		t.Fatalf("got %q (short values must not be redacted)", got)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Fatal("mode must be kept")
	}
	if err := ScrubSecrets(filepath.Join(dir, "missing"), []string{"sk-secret-1"}); err != nil {
		t.Fatal("a missing root is not an error")
	}
}

// A key inside a SQLite database (as in Codex's thread_history_1.sqlite) is
// removed without corrupting the database: sqlite3's integrity check passes
// and the rows are all there.
func TestScrubKeepsASQLiteDatabaseIntact(t *testing.T) {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("sqlite3 is required (scripts/install-test-deps.sh installs it)")
	}
	key := "sk-test-0123456789abc" // 21 bytes, longer than Redacted
	dir := t.TempDir()
	db := filepath.Join(dir, "thread_history_1.sqlite")
	sql := "CREATE TABLE h(id INTEGER PRIMARY KEY, env TEXT, n INTEGER); CREATE INDEX h_env ON h(env);"
	for i := 0; i < 200; i++ {
		sql += fmt.Sprintf("INSERT INTO h(env, n) VALUES ('OPENAI_API_KEY=%s row %d', %d);", key, i, i)
	}
	if out, err := exec.Command(sqlite, db, sql).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
	if err := ScrubSecrets(dir, []string{key}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(db)
	if bytes.Contains(data, []byte(key)) {
		t.Fatal("the key is still in the database")
	}
	out, err := exec.Command(sqlite, db, "PRAGMA integrity_check; SELECT count(*), sum(n) FROM h WHERE env LIKE 'OPENAI_API_KEY=%';").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok\n200|19900" {
		t.Fatalf("after scrubbing: %v %q", err, out)
	}
}

// ScrubFound names the files that held a secret; a large sparse file is
// searched by its data only and masked in place, staying sparse.
func TestScrubFoundSearchesSparseFilesByTheirData(t *testing.T) {
	dir := t.TempDir()
	const key = "sk-scan-me-0042"
	os.WriteFile(filepath.Join(dir, "env.txt"), []byte("OPENAI_API_KEY="+key+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "clean.txt"), []byte("nothing\n"), 0o644)
	big := filepath.Join(dir, "sparse.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// The key straddles a chunk boundary, far into a 1 GiB file of holes.
	at := int64(512<<20) + scanChunk - 5
	if _, err := f.WriteAt([]byte(key), at); err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 30)
	f.Close()
	found, err := ScrubFound(dir, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(found, ",") != "env.txt,sparse.bin" {
		t.Fatalf("found %v", found)
	}
	got := make([]byte, len(key))
	bf, _ := os.Open(big)
	bf.ReadAt(got, at)
	bf.Close()
	if string(got) != strings.Repeat("*", len(key)) {
		t.Errorf("sparse file: %q", got)
	}
	var st syscall.Stat_t
	syscall.Stat(big, &st)
	if st.Blocks*512 > 16<<20 {
		t.Errorf("the sparse file was filled: %d bytes allocated", st.Blocks*512)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "env.txt")); string(b) != "OPENAI_API_KEY="+Redacted+"\n" {
		t.Errorf("env.txt: %q", b)
	}
}
