package linux

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/procage-go/procage/profile"
)

// seccompData lays out struct seccomp_data for x/net/bpf's VM. The VM
// loads words big-endian (network order) while the kernel loads them in
// host order, so each 32-bit word is written big-endian at the offset the
// kernel reads it from: the low word of args[i] at 16+8i (little-endian
// hosts), the high word at 20+8i.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[offArgs+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[offArgs+8*i+4:], uint32(a>>32))
	}
	return b
}

func runFilter(t *testing.T, prog []bpf.RawInstruction, data []byte) uint32 {
	t.Helper()
	insts, ok := bpf.Disassemble(prog)
	if !ok {
		t.Fatal("filter does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	out, err := vm.Run(data)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return uint32(out)
}

func mustPlan(t *testing.T, opts []profile.Option, accept ...profile.Gap) *Plan {
	t.Helper()
	pol, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Lower(pol, Env{Env: profile.Env{Home: "/home/u"}, Accept: accept})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

const (
	allow = retAllow
	eperm = retErrno | uint32(EPERM)
	enosy = retErrno | uint32(ENOSYS)
	kill  = retKillProcess
)

func TestFilterVM(t *testing.T) {
	nonForking := mustPlan(t, nil)
	forking := mustPlan(t, []profile.Option{profile.Fork()})
	netOn := mustPlan(t, []profile.Option{profile.Network(profile.NetworkOn)}, profile.GapLocalServices)
	loop := mustPlan(t, []profile.Option{profile.Network(profile.NetworkLoopback, 8080)}, profile.GapLoopback)
	unix := mustPlan(t, []profile.Option{profile.UnixSocket("/run/app.sock")}, profile.GapUnixSocketPath)
	loopAny := mustPlan(t, []profile.Option{profile.Network(profile.NetworkLoopback, profile.AnyPort)}, profile.GapLoopback)
	waived := mustPlan(t, []profile.Option{profile.Waive(profile.ProcessAccess)})

	type call struct {
		name string
		nr   string
		args []uint64
		want uint32
	}
	sock := func(dom, typ uint64) []uint64 { return []uint64{dom, typ, 0} }
	for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
		tests := []struct {
			plan  *Plan
			pname string
			calls []call
		}{
			{nonForking, "non-forking", []call{
				{"read is allowed", "", nil, allow},
				{"ptrace", "ptrace", nil, eperm},
				{"process_vm_readv", "process_vm_readv", nil, eperm},
				{"io_uring_setup", "io_uring_setup", nil, eperm},
				{"clone3 gets ENOSYS", "clone3", nil, enosy},
				{"thread clone works", "clone", []uint64{0x3d0f00}, allow}, // glibc pthread_create flags, CLONE_THREAD set
				{"fork-like clone is denied", "clone", []uint64{0x1200011}, eperm},
				{"fork", "fork", nil, eperm},
				{"vfork", "vfork", nil, eperm},
				{"setsid allowed without fork", "setsid", nil, allow},
				{"unshare user ns", "unshare", []uint64{cloneNewUser}, eperm},
				{"unshare time ns", "unshare", []uint64{cloneNewTime}, eperm},
				{"unshare files is harmless", "unshare", []uint64{0x400}, allow},
				{"thread clone with new net ns", "clone", []uint64{cloneThread | cloneNewNet}, eperm},
				{"TIOCSTI", "ioctl", []uint64{0, tiocsti, 0}, eperm},
				{"TIOCSTI with high garbage", "ioctl", []uint64{0, 0xffffffff00000000 | tiocsti, 0}, eperm},
				{"TIOCLINUX", "ioctl", []uint64{0, tioclinux, 0}, eperm},
				{"TCGETS", "ioctl", []uint64{0, 0x5401, 0}, allow},
				{"TIOCSWINSZ", "ioctl", []uint64{0, tiocswinsz, 0}, eperm},
				{"TIOCGWINSZ", "ioctl", []uint64{0, 0x5413, 0}, allow},
				{"F_SETLEASE", "fcntl", []uint64{3, fSetLease, 0}, eperm},
				{"F_GETLEASE", "fcntl", []uint64{3, 1025, 0}, allow},
				{"F_SETFL", "fcntl", []uint64{3, 4, 0x800}, allow},
				{"mq_open", "mq_open", nil, eperm},
				{"mq_unlink", "mq_unlink", nil, eperm},
				{"mq_timedsend", "mq_timedsend", nil, eperm},
				{"mq_timedreceive", "mq_timedreceive", nil, eperm},
				{"mq_notify", "mq_notify", nil, eperm},
				{"mq_getsetattr", "mq_getsetattr", nil, eperm},
				{"bind with no family allowed", "bind", []uint64{3, 0, 110}, eperm},
				{"file_setattr", "file_setattr", nil, enosy},
				{"file_getattr", "file_getattr", nil, enosy},
				{"listmount", "listmount", nil, enosy},
				{"statmount", "statmount", nil, enosy},
				{"listns", "listns", nil, enosy},
				{"quotactl_fd", "quotactl_fd", nil, eperm},
				{"open_tree_attr", "open_tree_attr", nil, eperm},
				{"MSG_FASTOPEN with no inet socket is moot", "sendto", []uint64{3, 0, 1, msgFastOpen}, allow},
				{"AF_INET socket", "socket", sock(afInet, sockStream), eperm},
				{"AF_UNIX socket", "socket", sock(afUnix, sockStream), eperm},
				{"AF_NETLINK socket", "socket", sock(afNetlink, 3), eperm},
				{"keyctl", "keyctl", nil, eperm},
				{"bpf", "bpf", nil, eperm},
				{"open_by_handle_at", "open_by_handle_at", nil, eperm},
				{"mount", "mount", nil, eperm},
				{"setns", "setns", nil, eperm},
			}},
			{forking, "forking", []call{
				{"fork-like clone", "clone", []uint64{0x1200011}, allow},
				{"fork", "fork", nil, allow},
				{"setsid", "setsid", nil, eperm},
				{"setpgid", "setpgid", []uint64{0, 0}, eperm},
				{"clone3 still ENOSYS", "clone3", nil, enosy},
				{"clone with new user ns", "clone", []uint64{0x1200011 | cloneNewUser}, eperm},
			}},
			{netOn, "network on", []call{
				{"AF_INET", "socket", sock(afInet, 2), allow},
				{"AF_INET6", "socket", sock(afInet6, sockStream), allow},
				{"AF_NETLINK", "socket", sock(afNetlink, 3), allow},
				{"AF_NETLINK SOCK_DGRAM|SOCK_CLOEXEC", "socket", sock(afNetlink, 2|0x80000), allow},
				{"NETLINK_SOCK_DIAG", "socket", []uint64{afNetlink, 3, 4}, eperm},
				{"NETLINK_CONNECTOR", "socket", []uint64{afNetlink, 2, 11}, eperm},
				{"NETLINK_AUDIT, high garbage", "socket", []uint64{afNetlink, 3, 0xffffffff00000009}, eperm},
				{"AF_INET with protocol 17", "socket", []uint64{afInet, 2, 17}, allow},
				{"AF_UNIX", "socket", sock(afUnix, sockStream), eperm},
				{"AF_PACKET", "socket", sock(17, 3), eperm},
				{"bind", "bind", []uint64{3, 0, 16}, allow},
				{"MSG_FASTOPEN: no port rules", "sendto", []uint64{3, 0, 1, msgFastOpen}, allow},
			}},
			{loop, "loopback", []call{
				{"TCP", "socket", sock(afInet, sockStream|0x80000), allow}, // SOCK_CLOEXEC
				{"TCP6", "socket", sock(afInet6, sockStream), allow},
				{"UDP", "socket", sock(afInet, 2), eperm},
				{"AF_UNIX", "socket", sock(afUnix, sockStream), eperm},
				{"bind", "bind", []uint64{3, 0, 16}, allow},
				{"sendto MSG_FASTOPEN", "sendto", []uint64{3, 0, 1, msgFastOpen}, eperm},
				{"sendto MSG_FASTOPEN|MSG_NOSIGNAL", "sendto", []uint64{3, 0, 1, msgFastOpen | 0x4000}, eperm},
				{"sendto MSG_NOSIGNAL", "sendto", []uint64{3, 0, 1, 0x4000}, allow},
				{"sendmsg MSG_FASTOPEN", "sendmsg", []uint64{3, 0, msgFastOpen}, eperm},
				{"sendmsg, flags 0", "sendmsg", []uint64{3, 0, 0, msgFastOpen}, allow},
				{"sendmmsg MSG_FASTOPEN", "sendmmsg", []uint64{3, 0, 1, msgFastOpen}, eperm},
				{"TCP_FASTOPEN_CONNECT", "setsockopt", []uint64{3, ipprotoTCP, tcpFastOpenConnect}, eperm},
				{"TCP_NODELAY", "setsockopt", []uint64{3, ipprotoTCP, 1}, allow},
				{"SO_REUSEADDR (level SOL_SOCKET, 2)", "setsockopt", []uint64{3, 1, 2}, allow},
				{"level 30, option 6", "setsockopt", []uint64{3, tcpFastOpenConnect, ipprotoTCP}, allow},
			}},
			{loopAny, "loopback, any port", []call{
				{"sendto MSG_FASTOPEN: no port rules", "sendto", []uint64{3, 0, 1, msgFastOpen}, allow},
				{"TCP_FASTOPEN_CONNECT: no port rules", "setsockopt", []uint64{3, ipprotoTCP, tcpFastOpenConnect}, allow},
			}},
			{waived, "process-access waived", []call{
				{"mq_open", "mq_open", nil, allow},
				{"F_SETLEASE", "fcntl", []uint64{3, fSetLease, 0}, allow},
				{"TIOCSWINSZ still", "ioctl", []uint64{0, tiocswinsz, 0}, eperm},
			}},
			{unix, "unix socket", []call{
				{"AF_UNIX", "socket", sock(afUnix, sockStream), allow},
				{"AF_INET", "socket", sock(afInet, sockStream), eperm},
				{"bind", "bind", []uint64{3, 0, 110}, allow},
			}},
		}
		for _, tt := range tests {
			prog, err := Filter(arch, tt.plan.Seccomp)
			if err != nil {
				t.Fatalf("%s %s: %v", arch.Name, tt.pname, err)
			}
			for _, c := range tt.calls {
				nr := uint32(0) // read on amd64; io_setup on arm64: allowed either way
				if c.nr != "" {
					var ok bool
					if nr, ok = arch.Syscall(c.nr); !ok {
						continue // fork and vfork do not exist on arm64
					}
				}
				if got := runFilter(t, prog, seccompData(arch.AuditArch, nr, c.args...)); got != c.want {
					t.Errorf("%s %s: %s: got %#x, want %#x", arch.Name, tt.pname, c.name, got, c.want)
				}
			}
			// A foreign architecture (i386 entry: AUDIT_ARCH_I386) is killed.
			if got := runFilter(t, prog, seccompData(0x40000003, 0)); got != kill {
				t.Errorf("%s %s: i386 arch: got %#x, want kill", arch.Name, tt.pname, got)
			}
			x32 := runFilter(t, prog, seccompData(arch.AuditArch, x32SyscallBit) /* x32 read */)
			if arch.X32 {
				if x32 != kill {
					t.Errorf("%s %s: x32 read: got %#x, want kill", arch.Name, tt.pname, x32)
				}
			} else if x32 != enosy {
				t.Errorf("%s %s: number with bit 30 on arm64: got %#x, want ENOSYS (above the ceiling)", arch.Name, tt.pname, x32)
			}
			// Numbers above the reviewed table answer ENOSYS; the ceiling
			// itself is a reviewed call.
			for nr, want := range map[uint32]uint32{arch.ceiling: allow, arch.ceiling + 1: enosy, 1000: enosy, 0xffffffff: enosy} {
				if got := runFilter(t, prog, seccompData(arch.AuditArch, nr)); got != want && !(arch.X32 && nr&x32SyscallBit != 0) {
					t.Errorf("%s %s: number %d: got %#x, want %#x", arch.Name, tt.pname, nr, got, want)
				}
			}
		}
	}
}

func TestFilterRejectsBadConds(t *testing.T) {
	for _, r := range []SeccompRule{
		{Syscall: "socket", Conds: []Cond{{Arg: 6, Op: OpIn, Vals: []uint32{1}}}},
		{Syscall: "socket", Conds: []Cond{{Arg: 0, Op: OpIn}}},
		{Syscall: "socket", Conds: []Cond{{Arg: 0, Op: OpMaskedNe, Mask: 1}}},
		{Syscall: "socket", Conds: []Cond{{Arg: 0, Op: 99}}},
	} {
		if _, err := Filter(ArchAMD64, []SeccompRule{r}); err == nil {
			t.Errorf("Filter(%v) = nil error", r)
		}
	}
	// A value set too long for one 8-bit jump is refused, not mis-jumped.
	big := make([]uint32, 300)
	for i := range big {
		big[i] = uint32(i)
	}
	if _, err := Filter(ArchAMD64, []SeccompRule{{Syscall: "socket", Conds: []Cond{{Arg: 0, Op: OpNotIn, Vals: big}}}}); err == nil {
		t.Error("Filter with a 300-value set: nil error")
	}
}

func TestFilterLongInSet(t *testing.T) {
	big := make([]uint32, 256)
	if _, err := Filter(ArchAMD64, []SeccompRule{{Syscall: "socket", Conds: []Cond{{Arg: 0, Op: OpIn, Vals: big}}}}); err == nil {
		t.Error("Filter with a 256-value in-set: nil error")
	}
}

// evalRules is the rules' meaning, written plainly: the first rule naming
// the call whose conditions all hold gives its errno; a foreign arch or an
// x32 number kills; anything else is allowed.
func evalRules(arch *Arch, rules []SeccompRule, auditArch, nr uint32, args [6]uint64) uint32 {
	if auditArch != arch.AuditArch {
		return kill
	}
	if arch.X32 && nr&x32SyscallBit != 0 {
		return kill
	}
	if nr > arch.ceiling {
		return enosy
	}
	for _, r := range rules {
		want, ok := arch.Syscall(r.Syscall)
		if !ok || want != nr {
			continue
		}
		match := true
		for _, c := range r.Conds {
			v := uint32(args[c.Arg])
			var holds bool
			switch c.Op {
			case OpIn:
				holds = slices.Contains(c.Vals, v)
			case OpNotIn:
				holds = !slices.Contains(c.Vals, v)
			case OpMaskAny:
				holds = v&c.Mask != 0
			case OpMaskNone:
				holds = v&c.Mask == 0
			case OpMaskedNe:
				holds = v&c.Mask != c.Vals[0]
			}
			if !holds {
				match = false
				break
			}
		}
		if match {
			return retErrno | uint32(r.Errno)
		}
	}
	return allow
}

// interesting returns argument values the rules care about, so random
// inputs hit conditions often.
func interesting(r *rand.Rand, rules []SeccompRule) uint64 {
	var vals []uint32
	for _, rule := range rules {
		for _, c := range rule.Conds {
			vals = append(vals, c.Vals...)
			vals = append(vals, c.Mask, c.Mask|cloneThread, c.Mask&^cloneThread)
		}
	}
	switch r.IntN(4) {
	case 0:
		return r.Uint64()
	case 1:
		return uint64(r.Uint32())
	default:
		v := uint64(vals[r.IntN(len(vals))])
		if r.IntN(2) == 0 {
			v |= r.Uint64() << 32 // high garbage the kernel ignores
		}
		return v
	}
}

// TestFilterMatchesRules: on 30,000 random seccomp_data per plan and
// architecture, the assembled program answers exactly as the rules read
// plainly (evalRules) do.
func TestFilterMatchesRules(t *testing.T) {
	plans := []*Plan{
		mustPlan(t, nil),
		mustPlan(t, []profile.Option{profile.Fork()}),
		mustPlan(t, []profile.Option{profile.Network(profile.NetworkOn)}, profile.GapLocalServices),
		mustPlan(t, []profile.Option{profile.Network(profile.NetworkLoopback, 80), profile.UnixSocket("/x")}, profile.GapLoopback, profile.GapUnixSocketPath),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
		var nrs []uint32 // the calls the rules name, so random inputs hit them often
		for _, pl := range plans {
			for _, r := range pl.Seccomp {
				if nr, ok := arch.Syscall(r.Syscall); ok {
					nrs = append(nrs, nr)
				}
			}
		}
		for pi, pl := range plans {
			prog, err := Filter(arch, pl.Seccomp)
			if err != nil {
				t.Fatal(err)
			}
			insts, _ := bpf.Disassemble(prog)
			vm, err := bpf.NewVM(insts)
			if err != nil {
				t.Fatal(err)
			}
			for range 30000 {
				audit := arch.AuditArch
				if r.IntN(50) == 0 {
					audit = r.Uint32()
				}
				nr := nrs[r.IntN(len(nrs))]
				switch r.IntN(10) {
				case 0:
					nr = r.Uint32() % 500
				case 2:
					nr = arch.ceiling + uint32(r.IntN(3)) - 1
				case 1:
					nr |= x32SyscallBit
				}
				var args [6]uint64
				for i := range args {
					args[i] = interesting(r, pl.Seccomp)
				}
				got, err := vm.Run(seccompData(audit, nr, args[:]...))
				if err != nil {
					t.Fatal(err)
				}
				if want := evalRules(arch, pl.Seccomp, audit, nr, args); uint32(got) != want {
					t.Fatalf("%s plan %d: arch %#x nr %d args %#x: program %#x, rules %#x", arch.Name, pi, audit, nr, args, uint32(got), want)
				}
			}
		}
	}
}

// FuzzFilterMatchesRules: for any seccomp_data, the forking and the
// loopback plans' programs answer as their rules read plainly.
func FuzzFilterMatchesRules(f *testing.F) {
	f.Add(true, uint32(0xc000003e), uint32(56), uint64(0x1200011), uint64(0), uint64(0))
	f.Add(false, uint32(0xc00000b7), uint32(198), uint64(2), uint64(2), uint64(0))
	var plans []*Plan
	for _, opt := range []profile.Option{profile.Fork(), profile.Network(profile.NetworkLoopback, 80)} {
		pol, err := profile.New(profile.BaseV1, opt)
		if err != nil {
			f.Fatal(err)
		}
		pl, err := Lower(pol, Env{Accept: []profile.Gap{profile.GapLoopback}})
		if err != nil {
			f.Fatal(err)
		}
		plans = append(plans, pl)
	}
	type vmFor struct {
		arch *Arch
		plan *Plan
		vm   *bpf.VM
	}
	var vms []vmFor
	for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
		for _, pl := range plans {
			prog, err := Filter(arch, pl.Seccomp)
			if err != nil {
				f.Fatal(err)
			}
			insts, _ := bpf.Disassemble(prog)
			vm, err := bpf.NewVM(insts)
			if err != nil {
				f.Fatal(err)
			}
			vms = append(vms, vmFor{arch, pl, vm})
		}
	}
	f.Fuzz(func(t *testing.T, loop bool, audit, nr uint32, a0, a1, a2 uint64) {
		for _, v := range vms {
			if (v.plan == plans[1]) != loop {
				continue
			}
			args := [6]uint64{a0, a1, a2}
			got, err := v.vm.Run(seccompData(audit, nr, args[:]...))
			if err != nil {
				t.Fatal(err)
			}
			if want := evalRules(v.arch, v.plan.Seccomp, audit, nr, args); uint32(got) != want {
				t.Fatalf("%s: arch %#x nr %d args %#x: program %#x, rules %#x", v.arch.Name, audit, nr, args, uint32(got), want)
			}
		}
	})
}

// TestFilterSearchDepth: the kernel runs a new filter once per system call
// number when it installs it (seccomp_cache_prepare in kernel/seccomp.c,
// which follows loads of nr and arch, constant jumps and returns), so that
// walk is paid by every spawn. With the binary search every number the
// rules do not name is answered within a few dozen instructions; the
// linear chain took more than one per rule.
func TestFilterSearchDepth(t *testing.T) {
	pl := mustPlan(t, []profile.Option{profile.Fork()})
	for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
		prog, err := Filter(arch, pl.Seccomp)
		if err != nil {
			t.Fatal(err)
		}
		named := map[uint32]bool{}
		for _, r := range pl.Seccomp {
			if nr, ok := arch.Syscall(r.Syscall); ok {
				named[nr] = true
			}
		}
		if len(named) < 64 {
			t.Fatalf("%s: only %d numbers named: the test needs a long rule list", arch.Name, len(named))
		}
		worst := 0
		for nr := uint32(0); nr <= arch.ceiling; nr++ {
			if named[nr] {
				continue
			}
			steps, ret := constWalk(t, prog, arch.AuditArch, nr)
			if ret != retAllow {
				t.Fatalf("%s: nr %d unnamed but answered %#x", arch.Name, nr, ret)
			}
			worst = max(worst, steps)
		}
		if worst > 40 {
			t.Errorf("%s: an unnamed number takes %d instructions (%d numbers named)", arch.Name, worst, len(named))
		}
	}
}

// constWalk runs prog on {nr, arch} as the kernel's constant-action
// emulation does and counts the instructions executed.
func constWalk(t *testing.T, prog []bpf.RawInstruction, arch, nr uint32) (steps int, ret uint32) {
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		steps++
		in := prog[pc]
		switch in.Op {
		case 0x20: // BPF_LD|BPF_W|BPF_ABS
			switch in.K {
			case offNr:
				a = nr
			case offArch:
				a = arch
			default:
				t.Fatalf("pc %d: argument load on nr %d", pc, nr)
			}
		case 0x05: // BPF_JMP|BPF_JA
			pc += int(in.K)
		case 0x15, 0x35, 0x25, 0x45: // JEQ, JGE, JGT, JSET with K
			var c bool
			switch in.Op {
			case 0x15:
				c = a == in.K
			case 0x35:
				c = a >= in.K
			case 0x25:
				c = a > in.K
			case 0x45:
				c = a&in.K != 0
			}
			if c {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case 0x06: // BPF_RET|BPF_K
			return steps, in.K
		default:
			t.Fatalf("pc %d: op %#x on nr %d", pc, in.Op, nr)
		}
	}
	t.Fatal("ran off the program")
	return
}
