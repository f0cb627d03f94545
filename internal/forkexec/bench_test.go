//go:build darwin || linux

package forkexec

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

var liveHeap [][]byte

// BenchmarkSpawn spawns and waits for true(1) with this package and with
// os/exec, with a small heap and with a 1 GiB live heap (every page
// touched, so a plain fork would copy its page tables). The two sides
// alternate inside one loop, and which goes first alternates too, so
// neither pays for the other's garbage or page faults; each side's time
// per spawn and their ratio are reported as metrics.
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
			a := trueAttr(b)
			var own, std time.Duration
			procage := func() {
				t := time.Now()
				runTrue(b, a)
				own += time.Since(t)
			}
			osExec := func() {
				t := time.Now()
				if err := exec.Command(truePath).Run(); err != nil {
					b.Fatal(err)
				}
				std += time.Since(t)
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					procage()
					osExec()
				} else {
					osExec()
					procage()
				}
			}
			b.ReportMetric(float64(own.Nanoseconds())/float64(b.N), "procage-ns/spawn")
			b.ReportMetric(float64(std.Nanoseconds())/float64(b.N), "os-exec-ns/spawn")
			b.ReportMetric(float64(own)/float64(std), "procage/os-exec")
		})
	}
}
