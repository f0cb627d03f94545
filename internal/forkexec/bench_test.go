//go:build darwin || linux

package forkexec

import (
	"os/exec"
	"runtime"
	"testing"
)

var liveHeap [][]byte

// BenchmarkSpawn spawns and waits for true(1) with this package and with
// os/exec, with a small heap and with a 1 GiB live heap (every page
// touched, so a plain fork would copy its page tables).
func BenchmarkSpawn(b *testing.B) {
	for _, heap := range []struct {
		name string
		mib  int
	}{{"small-heap", 0}, {"1GiB-heap", 1024}} {
		b.Run(heap.name, func(b *testing.B) {
			liveHeap = make([][]byte, heap.mib)
			for i := range liveHeap {
				liveHeap[i] = make([]byte, 1<<20)
				for j := 0; j < len(liveHeap[i]); j += 4096 {
					liveHeap[i][j] = 1
				}
			}
			defer func() { liveHeap = nil; runtime.GC() }()
			b.Run("procage", func(b *testing.B) {
				a := trueAttr(b)
				b.ResetTimer()
				for range b.N {
					runTrue(b, a)
				}
			})
			b.Run("os-exec", func(b *testing.B) {
				for range b.N {
					if err := exec.Command(truePath).Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
