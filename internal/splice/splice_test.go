package splice

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
)

// A client that half-closes after its request still gets the whole answer
// through Each, for several connections in turn, and a dial that fails
// closes the client's connection and is reported.
func TestEachForwardsBothWaysWithHalfClose(t *testing.T) {
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	answer := bytes.Repeat([]byte("0123456789"), 100000)
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, _ := io.ReadAll(c) // until the client's half-close
				c.Write(append(req, answer...))
			}()
		}
	}()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	go Each(front, func() (net.Conn, error) { return net.Dial("tcp", backend.Addr().String()) }, nil)
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", front.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("request\n"))
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, append([]byte("request\n"), answer...)) {
			t.Fatalf("connection %d: %d bytes back (%v), want %d", i, len(got), err, len("request\n")+len(answer))
		}
	}

	failing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer failing.Close()
	reported := make(chan error, 1)
	go Each(failing, func() (net.Conn, error) { return nil, io.ErrClosedPipe }, func(err error) { reported <- err })
	c, err := net.Dial("tcp", failing.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(c); len(got) != 0 {
		t.Errorf("a failed dial answered %q", got)
	}
	if err := <-reported; err == nil || !strings.Contains(err.Error(), "closed pipe") {
		t.Errorf("dial failure reported as %v", err)
	}
}
