package forkexec

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// cloexecModes are the ways the child marks descriptors close-on-exec:
// close_range, the /proc/self/fd listing, and the fcntl loop.
var cloexecModes = []struct {
	name           string
	fallback, loop bool
}{
	{"close_range", false, false},
	{"proc listing", true, false},
	{"fcntl loop", true, true},
}

func setCloexecMode(t *testing.T, fallback, loop bool) {
	t.Helper()
	forceCloexecFallback, forceProcFallback = fallback, loop
	t.Cleanup(func() { forceCloexecFallback, forceProcFallback = false, false })
}

// checkNoLeakAt: descriptor k is open without close-on-exec in this
// process and Attr.Files has exactly k entries, so k is the first
// descriptor the child must mark. The child must hold 0..k-1 and not k, in
// every close-on-exec mode and with either fork.
func checkNoLeakAt(t *testing.T, k int) {
	t.Helper()
	if flags, err := unix.FcntlInt(uintptr(k), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("descriptor %d: flags %#x, err %v; want it open without close-on-exec", k, flags, err)
	}
	if k < 3 {
		t.Fatalf("descriptor %d is below stdio", k)
	}
	dn := devNull(t).Fd()
	want := make([]int, k)
	for i := range want {
		want[i] = i
	}
	for _, m := range cloexecModes {
		for _, plain := range []bool{false, true} {
			name := m.name
			if plain {
				name += ", plain fork"
			}
			t.Run(name, func(t *testing.T) {
				setCloexecMode(t, m.fallback, m.loop)
				forcePlainFork = plain
				defer func() { forcePlainFork = false }()
				rep, err := spawnHelper(t, func(a *Attr) {
					for len(a.Files) < k {
						a.Files = append(a.Files, dn)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, rep.FDs); diff != "" {
					t.Errorf("child descriptors with len(Files) = %d and fd %d open without close-on-exec (-want +got):\n%s", k, k, diff)
				}
			})
		}
	}
}

// TestDescriptorAtLenFiles: the lowest free descriptor, opened without
// close-on-exec, is exactly len(Files) for the child (Files is padded up
// to it), so marking that starts one descriptor late leaks it.
func TestDescriptorAtLenFiles(t *testing.T) {
	k, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(k)
	t.Logf("descriptor %d, len(Files) = %d", k, k)
	checkNoLeakAt(t, k)
}

const fd3Env = "PROCAGE_FORKEXEC_FD3"

// TestDescriptorThreeLeaks: the literal case, fd 3 with the usual three
// Files. In this test process fd 3 is the runtime's own close-on-exec
// descriptor, so the test runs itself again with fd 3 inherited without
// close-on-exec (os/exec's ExtraFiles) and checks there.
func TestDescriptorThreeLeaks(t *testing.T) {
	if os.Getenv(fd3Env) != "" {
		checkNoLeakAt(t, 3)
		return
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(testExe(t), "-test.run=^TestDescriptorThreeLeaks$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fd3Env+"=1")
	cmd.ExtraFiles = []*os.File{f}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestDescriptorThreeLeaks")) {
		t.Fatalf("the test with fd 3 inherited failed (%v):\n%s", err, out)
	}
	// Each mode ran in the child.
	for _, m := range cloexecModes {
		if !bytes.Contains(out, []byte("--- PASS: TestDescriptorThreeLeaks/"+strings.ReplaceAll(m.name, " ", "_"))) {
			t.Errorf("mode %s did not run with fd 3 inherited:\n%s", m.name, out)
		}
	}
}

// children lists this process's child processes and their states from
// /proc: a zombie (state Z) is a child nobody reaped.
func children(t testing.TB) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	out := map[int]string{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out[pid] = f[0]
		}
	}
	return out
}

// TestFailedSpawnReaped: whatever step fails, Start reaps the child before
// it returns: no new child of this process, zombie or not, is left.
func TestFailedSpawnReaped(t *testing.T) {
	before := children(t)
	check := func(t *testing.T) {
		t.Helper()
		var left []string
		for pid, state := range children(t) {
			if _, ok := before[pid]; !ok {
				left = append(left, strconv.Itoa(pid)+" state "+state)
			}
		}
		slices.Sort(left)
		if len(left) > 0 {
			t.Errorf("children left after a failed Start: %v", left)
		}
	}
	for _, plain := range []bool{false, true} {
		for s := StepSession; s < stepEnd; s++ {
			name := s.String()
			if plain {
				name += ", plain fork"
			}
			t.Run(name, func(t *testing.T) {
				forcePlainFork = plain
				defer func() { forcePlainFork = false }()
				_, err := spawnHelper(t, func(a *Attr) { a.Calls = append(a.Calls, failingCall(t, s)) })
				wantStepError(t, err, s, failingErrno)
				check(t)
			})
		}
	}
	t.Run("missing executable", func(t *testing.T) {
		_, err := spawnHelper(t, func(a *Attr) { a.Path = "/nonexistent/procage" })
		wantStepError(t, err, StepExec, syscall.ENOENT)
		check(t)
	})
}

// TestStaleResultSlot: a Call with a result slot that is non-zero in the
// parent at fork, and that the call does not write (getpid writes
// nothing), fails its step with EPERM and the target never runs
// (spawnHelper checks the marker the target would create). The child must
// clear the slot before the call: otherwise a confirmation that never
// happened would pass as "sandboxed". Checked at every step a Call can
// run at, with vfork (the child shares the parent's memory) and with a
// plain fork (it has a copy).
func TestStaleResultSlot(t *testing.T) {
	for _, plain := range []bool{false, true} {
		for s := StepSession; s < StepExec; s++ {
			name := s.String()
			if plain {
				name += ", plain fork"
			}
			t.Run(name, func(t *testing.T) {
				forcePlainFork = plain
				defer func() { forcePlainFork = false }()
				stale := new(uint64)
				*stale = 1
				_, err := spawnHelper(t, func(a *Attr) {
					a.Calls = append(a.Calls, RawCall(s, syscall.SYS_GETPID).WithResult(stale))
				})
				wantStepError(t, err, s, syscall.EPERM)
			})
		}
	}
}
