package forkexec

import (
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSpawnPIDNamespace spawns and waits for true(1) in its own pid,
// mount (and, unless root, user) namespace with a fresh /proc, against
// os/exec and a plain procage spawn, in one alternating loop; it reports
// each side's time per spawn and the ratios.
func BenchmarkSpawnPIDNamespace(b *testing.B) {
	plain := trueAttr(b)
	ns := trueAttr(b)
	pidnsAttr(ns, false)
	var tNS, tPlain, tStd time.Duration
	sides := []func(){
		func() {
			t := time.Now()
			pr, err := StartProc(ns)
			if err != nil {
				b.Fatal(err)
			}
			if ws, err := pr.Wait(); err != nil || ws != 0 {
				b.Fatalf("true: %#x, %v", ws, err)
			}
			tNS += time.Since(t)
		},
		func() {
			t := time.Now()
			runTrue(b, plain)
			tPlain += time.Since(t)
		},
		func() {
			t := time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
			tStd += time.Since(t)
		},
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range sides {
			sides[(i+j)%len(sides)]()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tNS.Nanoseconds())/n, "pidns-ns/spawn")
	b.ReportMetric(float64(tStd.Nanoseconds())/n, "os-exec-ns/spawn")
	b.ReportMetric(float64(tNS)/float64(tStd), "pidns/os-exec")
	b.ReportMetric(float64(tPlain)/float64(tStd), "procage/os-exec")
}
