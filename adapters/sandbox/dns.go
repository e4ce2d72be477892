package sandbox

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A view has no network but loopback, so a name lookup could only wait for
// resolver timeouts. Instead the view's resolv.conf names a DNS sink the
// init serves on 127.0.0.1:53 (UDP and TCP) in the view's network
// namespace: it answers every query at once with REFUSED and says, on the
// command's stderr (stderr.log), which names were looked up (DNSRefusedLine).
// It answers nothing else and forwards nothing.

// resolvConf is the view's /etc/resolv.conf: only the sink, no search
// domain, no retry.
const resolvConf = "# hoh: a role's view has no network; this DNS sink refuses every lookup\n" +
	"nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"

// DNSRefusedLine starts the line a view's init writes on the command's
// stderr, once per distinct name, when it refuses a lookup; the name
// follows, quoted (strconv.Quote).
const DNSRefusedLine = "hoh sandbox: refused a DNS lookup of "

// dnsSinkAddr is where the sink listens in the view's network namespace.
const dnsSinkAddr = "127.0.0.1:53"

// Bounds of what the sink reports and serves: distinct names logged (the
// agent chooses them), a reported name's length, TCP connections at once,
// and how long one may stay idle.
const (
	dnsMaxLogged   = 32
	dnsMaxName     = 253
	dnsMaxConns    = 16
	dnsConnTimeout = 5 * time.Second
)

// resolvConfEntry places the view's resolv.conf over the host's
// /etc/resolv.conf (resolvConfAt).
func resolvConfEntry() (entry, bool) { return resolvConfAt("/etc/resolv.conf", SystemRuntime) }

// resolvConfAt places the view's resolv.conf where path leads, if that is
// in one of the directories shown (a link into /etc is followed). None when
// it leads elsewhere (systemd-resolved's link into /run): in the view that
// link leads nowhere, and a resolver without a resolv.conf asks 127.0.0.1,
// the sink, anyway; the view gains no directory for it.
func resolvConfAt(path string, shown []string) (entry, bool) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil || !underAny(target, shown) {
		return entry{}, false
	}
	if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
		return entry{}, false
	}
	return entry{Target: target, Kind: kindFile, Content: resolvConf}, true
}

// refuseQuery answers a DNS query message with REFUSED: the same id and
// opcode, the first question echoed, the QR bit set, nothing else. name is
// that question's name (lower case, "." for the root). ok is false for
// anything that is not a well-formed query (a response, a message too short
// for its header or its first question, a compressed or oversized name):
// no answer is given to those.
func refuseQuery(query []byte) (answer []byte, name string, ok bool) {
	const header = 12
	if len(query) < header || query[2]&0x80 != 0 || binary.BigEndian.Uint16(query[4:6]) == 0 {
		return nil, "", false
	}
	var labels []string
	i, wire := header, 0
	for {
		if i >= len(query) {
			return nil, "", false
		}
		n := int(query[i])
		if n&0xC0 != 0 { // a pointer or a reserved label type: no query's first name has one
			return nil, "", false
		}
		wire += n + 1
		if wire > 255 || i+1+n > len(query) {
			return nil, "", false
		}
		if n == 0 {
			i++
			break
		}
		labels = append(labels, strings.ToLower(string(query[i+1:i+1+n])))
		i += 1 + n
	}
	if i+4 > len(query) { // type and class
		return nil, "", false
	}
	question := query[header : i+4]
	answer = make([]byte, header, header+len(question))
	copy(answer[0:2], query[0:2])
	answer[2] = 0x80 | query[2]&0x79 // QR, the opcode and RD
	answer[3] = 5                    // REFUSED
	binary.BigEndian.PutUint16(answer[4:6], 1)
	answer = append(answer, question...)
	name = strings.Join(labels, ".")
	if name == "" {
		name = "."
	}
	return answer, name, true
}

// dnsSink refuses every query on its listeners and reports each distinct
// name once on out.
type dnsSink struct {
	out    io.Writer
	mu     sync.Mutex
	seen   map[string]bool
	conns  chan struct{}
	closed bool
}

// startDNSSink binds the sink's UDP and TCP sockets (port 53: the caller
// still holds CAP_NET_BIND_SERVICE) and serves them for as long as the
// process lives.
func startDNSSink(out io.Writer) error {
	pc, err := net.ListenPacket("udp4", dnsSinkAddr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", dnsSinkAddr)
	if err != nil {
		pc.Close()
		return err
	}
	s := &dnsSink{out: out, seen: map[string]bool{}, conns: make(chan struct{}, dnsMaxConns)}
	go s.serveUDP(pc)
	go s.serveTCP(ln)
	return nil
}

// report writes the refusal line for name, once per name and at most
// dnsMaxLogged names.
func (s *dnsSink) report(name string) {
	if len(name) > dnsMaxName {
		name = name[:dnsMaxName] + "…"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[name] || s.closed {
		return
	}
	if len(s.seen) == dnsMaxLogged {
		s.closed = true
		fmt.Fprintf(s.out, "hoh sandbox: refused further DNS lookups (more than %d names; not listed)\n", dnsMaxLogged)
		return
	}
	s.seen[name] = true
	fmt.Fprintf(s.out, "%s%s\n", DNSRefusedLine, strconv.Quote(name))
}

func (s *dnsSink) serveUDP(pc net.PacketConn) {
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		if answer, name, ok := refuseQuery(buf[:n]); ok {
			_, _ = pc.WriteTo(answer, from)
			s.report(name)
		}
	}
}

func (s *dnsSink) serveTCP(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case s.conns <- struct{}{}:
			go func() {
				defer func() { <-s.conns }()
				s.serveConn(c)
			}()
		default:
			c.Close() // too many at once
		}
	}
}

// serveConn refuses each length-prefixed query of one TCP connection.
func (s *dnsSink) serveConn(c net.Conn) {
	defer c.Close()
	var size [2]byte
	buf := make([]byte, 65535)
	for {
		_ = c.SetDeadline(time.Now().Add(dnsConnTimeout))
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		msg := buf[:binary.BigEndian.Uint16(size[:])]
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		answer, name, ok := refuseQuery(msg)
		if !ok {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(answer)))
		if _, err := c.Write(append(out, answer...)); err != nil {
			return
		}
		s.report(name)
	}
}

// DNSLookups returns the names a view's init reported refusing in a
// command's stderr (DNSRefusedLine lines), in order, each once.
func DNSLookups(stderr string) []string {
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.Split(stderr, "\n") {
		i := strings.Index(line, DNSRefusedLine)
		if i < 0 {
			continue
		}
		name, err := strconv.Unquote(strings.TrimSpace(line[i+len(DNSRefusedLine):]))
		if err != nil || seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	return names
}
