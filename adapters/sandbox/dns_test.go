package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// query builds a DNS query message for name (labels as given).
func query(id uint16, flags uint16, labels ...string) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = binary.BigEndian.AppendUint16(b, flags)
	b = append(b, 0, 1, 0, 0, 0, 0, 0, 0)
	for _, l := range labels {
		b = append(append(b, byte(len(l))), l...)
	}
	return append(b, 0, 0, 1, 0, 1) // root, type A, class IN
}

func TestRefuseQuery(t *testing.T) {
	ok := query(0xBEEF, 0x0100, "Api", "Example", "com")
	long := make([]string, 5)
	for i := range long {
		long[i] = strings.Repeat("a", 60)
	}
	for _, c := range []struct {
		name string
		q    []byte
		want string // "" for no answer
	}{
		{"a query", ok, "api.example.com"},
		{"the root", query(1, 0), "."},
		{"odd bytes are kept", query(2, 0, "a\"b\n", "x"), "a\"b\n.x"},
		{"empty", nil, ""},
		{"a short header", ok[:11], ""},
		{"no question", append(append([]byte{}, ok[:4]...), 0, 0, 0, 0, 0, 0, 0, 0), ""},
		{"a response", query(3, 0x8100, "a"), ""},
		{"a truncated name", ok[:15], ""},
		{"no type and class", ok[:len(ok)-4], ""},
		{"half a type", ok[:len(ok)-3], ""},
		{"a label past the end", append(append([]byte{}, ok[:12]...), 40, 'a'), ""},
		{"a compression pointer", append(append([]byte{}, ok[:12]...), 0xC0, 12, 0, 1, 0, 1), ""},
		{"a reserved label type", append(append([]byte{}, ok[:12]...), 0x41, 'a', 0, 0, 1, 0, 1), ""},
		{"a name over 255 bytes", query(4, 0, long...), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer, name, got := refuseQuery(c.q)
			if c.want == "" {
				if got || answer != nil {
					t.Fatalf("answered %x (%q), want no answer", answer, name)
				}
				return
			}
			if !got || name != c.want {
				t.Fatalf("got %q %v, want %q", name, got, c.want)
			}
			qlen := len(c.q) - 12
			if len(answer) != 12+qlen || !bytes.Equal(answer[:2], c.q[:2]) || !bytes.Equal(answer[12:], c.q[12:]) {
				t.Fatalf("answer %x does not echo the id and question of %x", answer, c.q)
			}
			if answer[2]&0x80 == 0 || answer[2]&0x79 != c.q[2]&0x79 || answer[3]&0x0F != 5 {
				t.Fatalf("flags %x %x: want QR, the opcode and RD kept, rcode REFUSED", answer[2], answer[3])
			}
			if counts := answer[4:12]; !bytes.Equal(counts, []byte{0, 1, 0, 0, 0, 0, 0, 0}) {
				t.Fatalf("counts %x, want one question and nothing else", counts)
			}
		})
	}
}

// lookupEnv makes the test binary, run in a view, look names up with Go's
// own resolver (which reads the view's resolv.conf) and print the result.
const lookupEnv = "HOH_TEST_DNS_LOOKUP"

func init() {
	names := os.Getenv(lookupEnv)
	if names == "" {
		return
	}
	for _, n := range strings.Split(names, ",") {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r := net.Resolver{PreferGo: true}
		_, err := r.LookupHost(ctx, n)
		cancel()
		var de *net.DNSError
		fmt.Printf("go %s: %v\n", n, errors.As(err, &de) && !de.IsTimeout && !de.IsNotFound && de.Server == "127.0.0.1:53")
	}
	os.Exit(0)
}

// A command that looks a name up in a view is refused at once by the view's
// DNS sink, whatever resolver it uses (Go's, reading the view's
// resolv.conf, and the C library's), and the command's stderr says which
// names were looked up, each once.
func TestAViewRefusesEveryLookupAndSaysWhichName(t *testing.T) {
	// A copy of the test binary the role's uid may run (the build
	// directory may be 0700), shown as a tool.
	dir, err := os.MkdirTemp("", "hoh-dns-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "sandbox.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `cat /etc/resolv.conf
` + lookupEnv + `=a.example,b.example,a.example ` + bin + `
if command -v getent >/dev/null; then getent hosts c.example; echo "getent:$?"; else echo "getent:none"; fi
`
	var out, errOut bytes.Buffer
	start := time.Now()
	ex, err := Confined{Inner: Local{KillGrace: 200 * time.Millisecond}, View: View{Tools: []string{dir}}}.Run(context.Background(),
		Command{Args: []string{"/bin/sh", "-c", script}, Dir: "/", Stdout: &out, Stderr: &errOut, WallTimeout: 2 * time.Minute})
	took := time.Since(start)
	if err != nil || ex.Code != 0 {
		t.Fatalf("%+v %v:\n%s\n%s", ex, err, out.String(), errOut.String())
	}
	got, stderr := out.String(), errOut.String()
	t.Logf("took %s\nstdout:\n%s\nstderr:\n%s", took, got, stderr)
	for _, want := range []string{"nameserver 127.0.0.1\n", "go a.example: true", "go b.example: true"} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(stderr, "no DNS sink") {
		t.Fatalf("the view has no DNS sink:\n%s", stderr)
	}
	wantNames := []string{"a.example", "b.example"}
	if !strings.Contains(got, "getent:none") {
		if !strings.Contains(got, "getent:2") { // not found, at once
			t.Errorf("getent did not fail as not found:\n%s", got)
		}
		wantNames = append(wantNames, "c.example")
	}
	for _, n := range wantNames {
		if line := DNSRefusedLine + fmt.Sprintf("%q\n", n); strings.Count(stderr, line) != 1 {
			t.Errorf("stderr should say once %q:\n%s", line, stderr)
		}
	}
	if names := DNSLookups(stderr); strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Errorf("DNSLookups = %q, want %q", names, wantNames)
	}
}

// The sink says which names it refused, once each, quoted, and stops
// listing after dnsMaxLogged names.
func TestTheDNSSinkReportsEachNameOnceAndBounded(t *testing.T) {
	var out bytes.Buffer
	s := &dnsSink{out: &out, seen: map[string]bool{}}
	s.report("a.example")
	s.report("a.example")
	s.report("evil\n\"name")
	for i := 0; i < 2*dnsMaxLogged; i++ {
		s.report(fmt.Sprintf("n%d.example", i))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != dnsMaxLogged+1 || lines[0] != DNSRefusedLine+`"a.example"` || lines[1] != DNSRefusedLine+`"evil\n\"name"` ||
		!strings.Contains(lines[len(lines)-1], "refused further DNS lookups") {
		t.Fatalf("got:\n%s", out.String())
	}
	if names := DNSLookups(out.String()); len(names) != dnsMaxLogged || names[1] != "evil\n\"name" {
		t.Fatalf("DNSLookups = %q", names)
	}
}

// Over TCP too, each length-prefixed query is refused on the connection.
func TestTheDNSSinkRefusesOverTCP(t *testing.T) {
	var out bytes.Buffer
	s := &dnsSink{out: &out, seen: map[string]bool{}}
	client, server := net.Pipe()
	defer client.Close()
	done := make(chan struct{})
	go func() { s.serveConn(server); close(done) }()
	client.SetDeadline(time.Now().Add(10 * time.Second))
	for _, name := range []string{"tcp", "tcp"} {
		q := query(7, 0x0100, name, "example")
		if _, err := client.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)); err != nil {
			t.Fatal(err)
		}
		var size [2]byte
		if _, err := io.ReadFull(client, size[:]); err != nil {
			t.Fatal(err)
		}
		answer := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(client, answer); err != nil {
			t.Fatal(err)
		}
		if len(answer) != len(q) || answer[3]&0x0F != 5 || !bytes.Equal(answer[:2], q[:2]) {
			t.Fatalf("answer %x to %x", answer, q)
		}
	}
	client.Close()
	<-done
	if got := out.String(); got != DNSRefusedLine+"\"tcp.example\"\n" {
		t.Fatalf("reported %q", got)
	}
}

// The view's resolv.conf goes where the host's leads when that is in the
// view (a link within /etc), and nowhere when the link leads out of it.
func TestTheViewsResolvConfReplacesTheHostsWhereItLeads(t *testing.T) {
	dir := t.TempDir()
	etc, run := filepath.Join(dir, "etc"), filepath.Join(dir, "run")
	os.MkdirAll(filepath.Join(etc, "resolvconf"), 0o755)
	os.MkdirAll(run, 0o755)
	os.WriteFile(filepath.Join(etc, "plain.conf"), []byte("nameserver 10.0.0.1\n"), 0o644)
	os.WriteFile(filepath.Join(etc, "resolvconf", "resolv.conf"), []byte("nameserver 10.0.0.1\n"), 0o644)
	os.WriteFile(filepath.Join(run, "stub.conf"), []byte("nameserver 127.0.0.53\n"), 0o644)
	os.Symlink("resolvconf/resolv.conf", filepath.Join(etc, "in.conf"))
	os.Symlink(filepath.Join(run, "stub.conf"), filepath.Join(etc, "out.conf"))
	for name, want := range map[string]string{"plain.conf": filepath.Join(etc, "plain.conf"),
		"in.conf": filepath.Join(etc, "resolvconf", "resolv.conf"), "out.conf": "", "missing.conf": ""} {
		e, ok := resolvConfAt(filepath.Join(etc, name), []string{etc})
		if got := map[bool]string{true: e.Target}[ok]; got != want {
			t.Errorf("%s: placed at %q, want %q", name, got, want)
		}
		if ok && (e.Kind != kindFile || !strings.Contains(e.Content, "nameserver 127.0.0.1\n")) {
			t.Errorf("%s: entry %+v", name, e)
		}
	}
}
