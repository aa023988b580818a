package lazyre

import (
	"testing"
)

func TestNew(t *testing.T) {
	re := New(`^a{2,3}$`)
	if first, second := re(), re(); first != second {
		t.Fatal("a second call compiled the expression again")
	}
	for _, tc := range []struct {
		in   string
		want bool
	}{{"a", false}, {"aa", true}, {"aaa", true}, {"aaaa", false}} {
		if got := re().MatchString(tc.in); got != tc.want {
			t.Errorf("match %q = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestNewInvalidPanicsOnFirstUse(t *testing.T) {
	re := New(`(`) // not compiled yet: no panic here
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic on first use")
		}
	}()
	re()
}
