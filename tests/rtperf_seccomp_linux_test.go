package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/sysnum"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// The kernel as the seccomp program's interpreter. A probe filter installed
// first answers every call whose sixth argument is probeCookie with errno
// probeErrno and lets the rest through; the policy's program (linux.Filter)
// installed after it decides first: the kernel keeps the most recently
// installed filter's answer among equal actions (kernel/seccomp.c,
// seccomp_run_filters), so a call the policy refuses returns its errno, and
// one it allows returns probeErrno without being made. Every number from 0
// to past the ceiling is made so, which covers every leaf of the binary
// search and both sides of each pivot, with arguments the rules' conditions
// name; the answer must be what (*linux.Plan).Decide says, whose reading of
// the rules shares no code with the BPF program or its emulator.
const (
	probeCookie = 0xc0c0a5a5
	probeErrno  = 4000
	probeHelper = "seccomp-probe"
)

type probeCall struct {
	Nr   uint64
	Args [5]uint64
}

// seccompProbeHelper installs the probe filter and then the program in the
// file argv[1] names (JSON: the program and the calls), on this thread
// only, makes the calls and prints each one's errno (0: it succeeded).
func seccompProbeHelper() int {
	var in struct {
		Prog  []bpf.RawInstruction
		Calls []probeCall
	}
	b, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		fmt.Println("input:", err)
		return 2
	}
	runtime.LockOSThread() // never unlocked: the thread ends with the process
	probe := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 16 + 8*5},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: probeCookie},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | probeErrno},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	policy := make([]unix.SockFilter, len(in.Prog))
	for i, r := range in.Prog {
		policy[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("no_new_privs:", err)
		return 2
	}
	for _, f := range [][]unix.SockFilter{probe, policy} {
		prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
		if _, _, e := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
			fmt.Println("seccomp:", e)
			return 2
		}
	}
	w := bufio.NewWriter(os.Stdout)
	for _, c := range in.Calls {
		_, _, e := syscall.RawSyscall6(uintptr(c.Nr), uintptr(c.Args[0]), uintptr(c.Args[1]), uintptr(c.Args[2]),
			uintptr(c.Args[3]), uintptr(c.Args[4]), probeCookie)
		fmt.Fprintln(w, int(e))
	}
	w.Flush()
	return 0
}

// runProbe runs the helper on prog and calls; it returns the errnos, or the
// helper's wait status when it was killed.
func runProbe(t *testing.T, prog []bpf.RawInstruction, calls []probeCall) ([]int, syscall.WaitStatus) {
	t.Helper()
	b, err := json.Marshal(struct {
		Prog  []bpf.RawInstruction
		Calls []probeCall
	}{prog, calls})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "probe.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], f)
	cmd.Env = []string{helperEnv + "=" + probeHelper}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
		return nil, ee.Sys().(syscall.WaitStatus)
	}
	if err != nil {
		t.Fatalf("probe helper: %v: %s %s", err, out, stderr.String())
	}
	var errnos []int
	for l := range strings.Lines(string(out)) {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			t.Fatalf("probe helper said %q", out)
		}
		errnos = append(errnos, n)
	}
	if len(errnos) != len(calls) {
		t.Fatalf("probe helper answered %d calls of %d", len(errnos), len(calls))
	}
	return errnos, 0
}

// TestRTPerfSeccompKernel: for real policies' programs, every number from 0
// past the ceiling, with zero arguments and with each value and mask the
// rules' conditions name, gets from the kernel what Decide says; on amd64
// x32 numbers and -1 (x32 bit set) kill the process (SIGSYS).
func TestRTPerfSeccompKernel(t *testing.T) {
	arch, table := linux.ArchAMD64, sysnum.AMD64
	if runtime.GOARCH == "arm64" {
		arch, table = linux.ArchARM64, sysnum.ARM64
	}
	names := map[uint32]string{}
	for name, nr := range table.Nums {
		names[nr] = name
	}
	for _, tc := range []struct {
		name   string
		opts   []profile.Option
		accept []profile.Gap
	}{
		{"base", nil, nil},
		{"fork", []profile.Option{profile.Fork()}, nil},
		{"loopback", []profile.Option{profile.Network(profile.NetworkLoopback, 80)}, []profile.Gap{profile.GapLoopback}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol, err := profile.New(profile.BaseV1, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := linux.Lower(pol, linux.Env{Env: profile.Env{Home: "/home/u"}, Accept: tc.accept})
			if err != nil {
				t.Fatal(err)
			}
			prog, err := linux.Filter(arch, pl.Seccomp)
			if err != nil {
				t.Fatal(err)
			}
			// Each number's argument values worth trying: zero, and what
			// the rules' conditions on it name (values, masks, all bits).
			vals := map[uint32][]probeCall{}
			for _, r := range pl.Seccomp {
				nr, ok := arch.Syscall(r.Syscall)
				if !ok {
					continue
				}
				for _, c := range r.Conds {
					if c.Arg > 4 {
						t.Fatalf("%s: a condition on argument %d, which the probe's cookie holds", r.Syscall, c.Arg)
					}
					for _, v := range append(slices.Clone(c.Vals), c.Mask, ^uint32(0), c.Mask&^1) {
						var pc probeCall
						pc.Nr = uint64(nr)
						pc.Args[c.Arg] = uint64(v)
						vals[nr] = append(vals[nr], pc)
					}
				}
			}
			// The ceiling as Decide reads it: the highest named number not
			// above the reviewed table.
			ceiling := uint32(0)
			for nr, name := range names {
				d, err := pl.Decide(linux.Access{Op: linux.OpSyscall, Syscall: name, Arch: arch})
				if err == nil && !d.AboveTable {
					ceiling = max(ceiling, nr)
				}
			}
			// uretprobe and uprobe bypass seccomp (kernel/seccomp.c,
			// __secure_computing's passthrough, Linux 6.11+) and raise
			// SIGILL unless called from their trampolines: not probed.
			skip := map[uint32]bool{}
			for _, n := range []string{"uretprobe", "uprobe"} {
				if nr, ok := arch.Syscall(n); ok {
					skip[nr] = true
				}
			}
			var calls []probeCall
			for nr := uint32(0); nr <= ceiling+3; nr++ {
				if skip[nr] {
					continue
				}
				calls = append(calls, probeCall{Nr: uint64(nr)})
				calls = append(calls, vals[nr]...)
			}
			for _, nr := range []uint64{1000, 0x3fffffff} {
				calls = append(calls, probeCall{Nr: nr})
			}
			got, ws := runProbe(t, prog, calls)
			if ws != 0 {
				t.Fatalf("the probe was killed: %v", ws)
			}
			wrong := 0
			for i, c := range calls {
				want := probeErrno
				name, named := names[uint32(c.Nr)]
				switch {
				case c.Nr > uint64(ceiling):
					want = int(syscall.ENOSYS)
				case named:
					var args [6]uint64
					copy(args[:], c.Args[:])
					args[5] = probeCookie
					d, err := pl.Decide(linux.Access{Op: linux.OpSyscall, Syscall: name, Args: args, Arch: arch})
					if err != nil {
						t.Fatal(err)
					}
					if !d.Allowed {
						want = int(d.Errno)
					}
				}
				if got[i] != want && wrong < 20 {
					wrong++
					t.Errorf("nr %d (%s) args %#x: the kernel says errno %d, Decide %d (%d: allowed)", c.Nr, name, c.Args, got[i], want, probeErrno)
				}
			}
			t.Logf("%d calls, numbers 0 to %d and beyond", len(calls), ceiling+3)
			// x32 numbers and -1 (x32 bit set) kill the process.
			for _, nr := range []uint64{x32Bit, x32Bit + 1, x32Bit + 59, 0xffffffff, ^uint64(0)} {
				if !arch.X32 {
					break
				}
				if _, ws := runProbe(t, prog, []probeCall{{Nr: nr}}); !ws.Signaled() || ws.Signal() != syscall.SIGSYS {
					t.Errorf("nr %#x: the probe was not killed by SIGSYS (%v)", nr, ws)
				}
			}
		})
	}
}

const x32Bit = 0x40000000
