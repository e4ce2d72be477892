package harnesstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Traced returns an executable that runs bin under strace, recording every
// connect(2) of it and its children in the returned log.
func Traced(t *testing.T, bin string) (wrapper, log string) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatal("strace is required for this test (scripts/install-test-deps.sh installs it)")
	}
	dir := t.TempDir()
	wrapper, log = filepath.Join(dir, filepath.Base(bin)), filepath.Join(dir, "connect.log")
	script := "#!/bin/sh\nexec " + strace + " -f -qq --seccomp-bpf -e trace=connect -o '" + log + "' '" + bin + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, log
}

var connectAddr = regexp.MustCompile(`connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), (?:sin_addr=inet_addr\("([^"]+)"\)|sin6_flowinfo=[^,]*, inet_pton\(AF_INET6, "([^"]+)")`)

// Connects reads a Traced log: the internet-socket connects to loopback
// (as host:port) and those to anywhere else, DNS resolvers included.
func Connects(t *testing.T, log string) (loopback, outside []string) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("strace log: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		m := connectAddr.FindStringSubmatch(line)
		if m == nil {
			if strings.Contains(line, "connect(") && !strings.Contains(line, "AF_UNIX") && !strings.Contains(line, "AF_NETLINK") {
				outside = append(outside, "unparsed: "+strings.TrimSpace(line))
			}
			continue
		}
		addr := m[2] + m[3]
		hostPort := addr + ":" + m[1]
		if strings.HasPrefix(addr, "127.") || addr == "::1" || strings.HasPrefix(addr, "::ffff:127.") {
			loopback = append(loopback, hostPort)
		} else {
			outside = append(outside, hostPort)
		}
	}
	return loopback, outside
}
