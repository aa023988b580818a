package desktop

import (
	"context"
	"sync"
	"testing"
)

// On SIGTERM Wails' signal handler and Airlock's both quit, concurrently: only one close
// may reach gtk_main_quit, or the second lands while the window is being destroyed.
func TestOnlyOneCloseGoesThrough(t *testing.T) {
	s := NewShell(nil)
	s.Quit() // before start-up: remembered
	var wg sync.WaitGroup
	var mu sync.Mutex
	through := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !s.beforeClose(context.Background()) {
				mu.Lock()
				through++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if through != 1 {
		t.Fatalf("%d closes went through to GTK, want exactly 1", through)
	}
}
