package seatbelt

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/profile"
)

// scaleLimit bounds lowering 2,000 rules against lowering 200: ten times
// the rules may cost at most twelve times the work. Quadratic work would
// cost about a hundred times.
const scaleLimit = 12.0

func scalePolicy(t testing.TB, n int) profile.Policy {
	t.Helper()
	var opts []profile.Option
	for i := range n {
		opts = append(opts, profile.Read(fmt.Sprintf("/data/d%04d/f", i)))
	}
	return mustNew(t, opts...)
}

func scaleLower(t testing.TB, p profile.Policy) {
	if _, err := LowerLimit(p, profile.Env{Home: "/Users/me"}, 100000); err != nil {
		t.Fatal(err)
	}
}

// TestLowerScalesLinearly: lowering grows linearly with the policy. Two
// measures, neither of which a loaded machine can push over the limit:
//
//   - allocations: the number of heap allocations and bytes allocated by
//     one Lower are counts, not timings, and the same on any machine;
//   - CPU time: the process's CPU time (not wall time, so time spent
//     waiting for a core does not count), with the collector off while
//     measuring, the best of interleaved runs. Load can only add time to
//     a run, so the best runs approach the true cost; the test keeps
//     measuring (up to 40 rounds) until the ratio of the best runs is under
//     the limit, which linear lowering reaches and quadratic lowering
//     never does.
func TestLowerScalesLinearly(t *testing.T) {
	p200, p2000 := scalePolicy(t, 200), scalePolicy(t, 2000)

	t.Run("allocations", func(t *testing.T) {
		allocs := func(p profile.Policy) (n float64, bytes uint64) {
			n = testing.AllocsPerRun(3, func() { scaleLower(t, p) })
			var before, after runtime.MemStats
			for range 3 {
				runtime.ReadMemStats(&before)
				scaleLower(t, p)
				runtime.ReadMemStats(&after)
				if b := after.TotalAlloc - before.TotalAlloc; bytes == 0 || b < bytes {
					bytes = b
				}
			}
			return n, bytes
		}
		n200, b200 := allocs(p200)
		n2000, b2000 := allocs(p2000)
		countRatio, bytesRatio := n2000/n200, float64(b2000)/float64(b200)
		t.Logf("allocations: lower 2000 / lower 200 = %.2fx (%.0f / %.0f), bytes %.2fx (%d / %d)", countRatio, n2000, n200, bytesRatio, b2000, b200)
		if countRatio > scaleLimit || bytesRatio > scaleLimit {
			t.Errorf("lowering 2,000 rules made %.1fx the allocations and %.1fx the bytes of lowering 200 (limit %gx)", countRatio, bytesRatio, scaleLimit)
		}
	})

	t.Run("cpu time", func(t *testing.T) {
		if testing.Short() || raceEnabled {
			t.Skip("CPU timing: needs a run without -short and -race (.ci/run makes one)")
		}
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		best := func(p profile.Policy, iters int, prev time.Duration) time.Duration {
			runtime.GC() // outside the measurement; the collector is off inside it
			start := cpuTime(t)
			for range iters {
				scaleLower(t, p)
			}
			d := (cpuTime(t) - start) / time.Duration(iters)
			if prev == 0 || d < prev {
				return d
			}
			return prev
		}
		var d200, d2000 time.Duration
		var ratio float64
		rounds := 0
		for rounds < 40 {
			d200 = best(p200, 20, d200)
			d2000 = best(p2000, 2, d2000)
			rounds++
			if ratio = float64(d2000) / float64(d200); rounds >= 5 && ratio <= scaleLimit {
				break
			}
		}
		t.Logf("cpu time: lower 2000 / lower 200 = %.2fx (%v / %v, best of %d rounds)", ratio, d2000, d200, rounds)
		if ratio > scaleLimit {
			t.Errorf("lowering 2,000 rules took %.1fx the CPU time of lowering 200 (limit %gx)", ratio, scaleLimit)
		}
	})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
