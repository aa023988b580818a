package egress

import (
	"net"
	"testing"
)

// lateConn is a connection whose Write has sent its bytes but returns only once the
// connection is closed: the moment between a write's system call and its count.
type lateConn struct {
	net.Conn
	writing, closed chan struct{}
}

func (c *lateConn) Write(b []byte) (int, error) {
	close(c.writing)
	<-c.closed
	return len(b), nil
}

func (c *lateConn) Close() error {
	close(c.closed)
	return nil
}

// TestCountedConnCountsTheWriteInFlightAtClose: the reply to a request can be read and
// the connection closed before the writer has counted the request; the record still
// counts it (seen on a loaded machine: a plain-http record with 0 bytes up).
func TestCountedConnCountsTheWriteInFlightAtClose(t *testing.T) {
	got := make(chan Record, 1)
	late := &lateConn{writing: make(chan struct{}), closed: make(chan struct{})}
	c := &countedConn{Conn: late, rec: Record{Domain: "x.test"}, emit: func(r Record) { got <- r }}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	}()
	<-late.writing // the write is in flight
	c.Close()
	<-wrote
	if r := <-got; r.BytesUp != 18 {
		t.Fatalf("the record counts %d bytes up, want 18", r.BytesUp)
	}
}
