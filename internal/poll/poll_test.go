package poll

import (
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	if !Until(make(chan struct{}), time.Millisecond, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Until stopped after %d checks", n)
	}
	done := make(chan struct{})
	close(done)
	if Until(done, time.Millisecond, func() bool { return true }) {
		t.Fatal("Until went on after done was closed")
	}
}
