package forkexec

import "testing"

func TestKeptAbove(t *testing.T) {
	for _, tt := range []struct {
		files []uintptr
		want  int
	}{
		{nil, 2}, // only the status pipe may move, onto 1
		{[]uintptr{0, 1, 2}, 3 + 1 + 3 + 1},
		{[]uintptr{0, 1, 1}, 8}, // stderr shares stdout: one dup onto 4
		{[]uintptr{9, 4, 7}, 9 + 1 + 3 + 1},
		{make([]uintptr, 40), 40 + 1 + 40 + 1},
	} {
		if got := KeptAbove(tt.files); got != tt.want {
			t.Errorf("KeptAbove(%v) = %d, want %d", tt.files, got, tt.want)
		}
	}
}
