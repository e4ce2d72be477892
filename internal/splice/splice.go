// Package splice joins connections byte for byte. It is the one forwarder
// behind every path between a role and the model endpoint: the loopback
// forwarder in a host role's network namespace and the host side of its
// socket, and the relay in a task container (cmd/hoh-relay) and its host
// side. Standard library only, so the static relay binary stays small.
package splice

import (
	"io"
	"net"
)

// Conns copies both ways until both directions ended. The end of one
// side's input is passed on as a half-close, so a client that finished
// sending still receives the whole answer.
func Conns(a, b net.Conn) {
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
}

// Each splices every connection ln accepts with a fresh connection from
// dial, until ln is closed; it returns the error that ended accepting. A
// failed dial closes the accepted connection and is passed to dialFailed
// (when not nil).
func Each(ln net.Listener, dial func() (net.Conn, error), dialFailed func(error)) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			t, err := dial()
			if err != nil {
				if dialFailed != nil {
					dialFailed(err)
				}
				return
			}
			defer t.Close()
			Conns(c, t)
		}()
	}
}
