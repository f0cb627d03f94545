package linux

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/procage-go/procage/profile"
)

func mustAccess(t *testing.T, op, arg string) Access {
	t.Helper()
	a, err := ParseAccess(op, arg)
	if err != nil {
		t.Fatalf("ParseAccess(%q, %q): %v", op, arg, err)
	}
	a.Arch = ArchAMD64
	return a
}

// TestDecideFS: which Landlock rule grants a filesystem access, with the
// rights of the rules along the path unioned, directory rights checked on
// the parent, and the hard-deny entry that took a right named.
func TestDecideFS(t *testing.T) {
	base := mustPlan(t, nil)
	// /opt/tools executable, /opt/tools/cache writable beneath it: an exec
	// there takes execute from the tree above and read_file from the rule
	// below.
	union := mustPlan(t, []profile.Option{profile.Exec("/opt/tools"), profile.ReadWrite("/opt/tools/cache")}, profile.GapTrustHandoff)
	file := mustPlan(t, []profile.Option{profile.FS(profile.AccessWrite, profile.Literal, "/srv/notes.txt")})
	ssh := mustPlan(t, []profile.Option{profile.Read("/home/u/.ssh")})
	home := mustPlan(t, []profile.Option{profile.Read("/home/u")}, profile.GapSecrets)
	git := mustPlan(t, []profile.Option{profile.ReadWrite("/work")}, profile.GapTrustHandoff)
	abi2, err := Lower(mustPolicy(t), Env{Env: profile.Env{Home: "/home/u"}, ABI: 2})
	if err != nil {
		t.Fatal(err)
	}
	type grant struct {
		right FSAccess
		path  string
	}
	tests := []struct {
		name    string
		pl      *Plan
		op, arg string
		allowed bool
		grants  []grant  // every check's grants, in order
		missing FSAccess // the failing check's
		denied  profile.Class
		gap     profile.Gap
		text    string // the String, when set
	}{
		{name: "base tree", pl: base, op: "read", arg: "/usr/share/zoneinfo/UTC", allowed: true,
			grants: []grant{{FSReadFile, "/usr/share"}},
			text:   "allowed: read_file on /usr/share/zoneinfo/UTC by Landlock rule (base) /usr/share: read_file|read_dir"},
		{name: "base tree, no write", pl: base, op: "write", arg: "/usr/bin/ls", missing: FSWriteFile,
			text: "denied (EACCES): no Landlock rule grants write_file on /usr/bin/ls; nearest rule (base) /usr/bin: execute|read_file|read_dir"},
		{name: "nothing covers", pl: base, op: "read", arg: "/root/.profile", missing: FSReadFile,
			text: "denied (EACCES): no Landlock rule grants read_file on /root/.profile; no rule covers /root/.profile or a directory above it"},
		{name: "seatbelt name", pl: base, op: "file-read-data", arg: "/etc/hosts", allowed: true, grants: []grant{{FSReadFile, "/etc/hosts"}}},
		{name: "exec needs read_file too", pl: base, op: "exec", arg: "/usr/bin/env", allowed: true, grants: []grant{{FSExecute | FSReadFile, "/usr/bin"}}},
		{name: "union along the path", pl: union, op: "exec", arg: "/opt/tools/cache/bin/go", allowed: true,
			grants: []grant{{FSReadFile, "/opt/tools/cache"}, {FSExecute, "/opt/tools"}},
			text:   "allowed: read_file on /opt/tools/cache/bin/go by Landlock rule (policy) /opt/tools/cache: write_file|read_file|read_dir|remove_dir|remove_file|make_dir|make_reg|make_sock|make_fifo|make_sym|refer|truncate; execute on /opt/tools/cache/bin/go by Landlock rule (policy) /opt/tools: execute|read_file|read_dir"},
		{name: "no write above the writable rule", pl: union, op: "create", arg: "/opt/tools/x", missing: FSMakeReg},
		{name: "create: directory then file", pl: union, op: "create", arg: "/opt/tools/cache/x", allowed: true,
			grants: []grant{{FSMakeReg, "/opt/tools/cache"}, {FSWriteFile, "/opt/tools/cache"}}},
		{name: "a file rule is not its directory", pl: file, op: "remove", arg: "/srv/notes.txt", missing: FSRemoveFile},
		{name: "a file rule", pl: file, op: "truncate", arg: "/srv/notes.txt", allowed: true, grants: []grant{{FSTruncate, "/srv/notes.txt"}}},
		{name: "right by name on the directory", pl: union, op: "make_sock", arg: "/opt/tools/cache/s", allowed: true, grants: []grant{{FSMakeSock, "/opt/tools/cache"}}},
		{name: "right by name on the file", pl: base, op: "ioctl_dev", arg: "/dev/null", allowed: true, grants: []grant{{FSIoctlDev, "/dev/null"}}},
		{name: "list", pl: base, op: "list", arg: "/etc/ssl/certs", allowed: true, grants: []grant{{FSReadDir, "/etc/ssl/certs"}}},
		{name: "hard-deny took it", pl: ssh, op: "read", arg: "/home/u/.ssh/id_ed25519", missing: FSReadFile, denied: profile.Secrets,
			text: "denied (EACCES): no Landlock rule grants read_file on /home/u/.ssh/id_ed25519; hard-deny secrets took read_file from the policy rule /home/u/.ssh (protected /home/u/.ssh)"},
		{name: "accepted gap", pl: home, op: "read", arg: "/home/u/.ssh/id_ed25519", allowed: true, grants: []grant{{FSReadFile, "/home/u"}}, gap: profile.GapSecrets},
		{name: "no gap outside the protected paths", pl: home, op: "read", arg: "/home/u/notes", allowed: true, grants: []grant{{FSReadFile, "/home/u"}}},
		{name: "git config in a writable tree", pl: git, op: "write", arg: "/work/.git/config", allowed: true, grants: []grant{{FSWriteFile, "/work"}}, gap: profile.GapTrustHandoff},
		{name: "git objects are not protected", pl: git, op: "create", arg: "/work/.git/objects/ab/cd", allowed: true,
			grants: []grant{{FSMakeReg, "/work"}, {FSWriteFile, "/work"}}},
		{name: "unhandled at an old ABI", pl: abi2, op: "truncate", arg: "/usr/bin/env", allowed: true,
			text: "allowed: the ruleset does not handle truncate (Landlock ABI 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.pl.Decide(mustAccess(t, tt.op, tt.arg))
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tt.allowed {
				t.Fatalf("allowed %v, want %v: %s", d.Allowed, tt.allowed, d)
			}
			if want := map[bool]Errno{true: 0, false: EACCES}[tt.allowed]; d.Errno != want {
				t.Errorf("errno %v, want %v", d.Errno, want)
			}
			var got []grant
			var missing FSAccess
			var denied []profile.Class
			for _, c := range d.Checks {
				for _, g := range c.Grants {
					got = append(got, grant{g.Right, g.Rule.Path})
				}
				if missing == 0 {
					missing = c.Missing
				}
				for _, dn := range c.Denied {
					denied = append(denied, dn.Class)
				}
			}
			if tt.allowed && !slices.Equal(got, tt.grants) {
				t.Errorf("grants %v, want %v (%s)", got, tt.grants, d)
			}
			if missing != tt.missing {
				t.Errorf("missing %v, want %v", missing, tt.missing)
			}
			if (tt.denied == "") != (len(denied) == 0) || tt.denied != "" && !slices.Contains(denied, tt.denied) {
				t.Errorf("hard-deny %v, want %q", denied, tt.denied)
			}
			if !slices.ContainsFunc(d.Gaps, func(g profile.GapPart) bool { return g.Gap == tt.gap }) && tt.gap != "" || tt.gap == "" && len(d.Gaps) > 0 {
				t.Errorf("gaps %v, want %q", d.Gaps, tt.gap)
			}
			if tt.text != "" && d.String() != tt.text {
				t.Errorf("String:\n got %s\nwant %s", d, tt.text)
			}
		})
	}
}

func mustPolicy(t *testing.T, opts ...profile.Option) profile.Policy {
	t.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecideExecNeedsReadFile: execve opens the file for reading, so a rule
// with execute alone does not let it run (the kernel test in
// tests/decide_linux_test.go shows the same on a real ruleset).
func TestDecideExecNeedsReadFile(t *testing.T) {
	pl := &Plan{ABI: 7, HandledFS: fsRightsAt(7), Rules: []PathRule{{Path: "/x", Access: FSExecute, Layer: LayerPolicy}}}
	d, err := pl.Decide(mustAccess(t, "exec", "/x/prog"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Checks[0].Missing != FSReadFile {
		t.Errorf("exec with execute alone: %s", d)
	}
	d, _ = pl.Decide(mustAccess(t, "execute", "/x/prog"))
	if !d.Allowed {
		t.Errorf("the execute right alone: %s", d)
	}
}

// TestDecideSyscall: the first seccomp rule whose conditions hold decides,
// as in the filter.
func TestDecideSyscall(t *testing.T) {
	nonForking := mustPlan(t, nil)
	forking := mustPlan(t, []profile.Option{profile.Fork()})
	tests := []struct {
		name    string
		pl      *Plan
		op, arg string
		errno   Errno // 0: allowed
		why     string
	}{
		{"namespaces", forking, "clone", "CLONE_NEWUSER|SIGCHLD", EPERM, "no new namespaces"},
		{"fork refused", nonForking, "fork", "", EPERM, "a non-forking policy: no new processes (threads still work)"},
		{"fork allowed", forking, "fork", "", 0, ""},
		{"thread in a non-forking cage", nonForking, "clone", "CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD", 0, ""},
		{"process in a non-forking cage", nonForking, "clone", "SIGCHLD", EPERM, "a non-forking policy: no new processes (threads still work)"},
		{"clone3", forking, "clone3", "", ENOSYS, ""},
		{"openat2", forking, "openat2", "", ENOSYS, ""},
		{"set-ID bit", forking, "fchmodat", "AT_FDCWD,/tmp/x,04755", EPERM, "no set-user-ID or set-group-ID file: inert in the cage, a backdoor outside it"},
		{"plain mode, not root", forking, "fchmodat", "AT_FDCWD,/tmp/x,0644", 0, ""},
		{"network off", forking, "socket", "AF_INET,SOCK_STREAM", EPERM, ""},
		{"socketpair", forking, "socketpair", "AF_UNIX,SOCK_STREAM", 0, ""},
		{"socketpair datagram", forking, "socketpair", "AF_UNIX,SOCK_DGRAM", EPERM, ""},
		{"another process's limits", forking, "prlimit64", "1,7", EPERM, ""},
		{"its own limits", forking, "prlimit64", "0,7", 0, ""},
		{"TIOCSTI", forking, "ioctl", "0,TIOCSTI", EPERM, ""},
		{"getpid", forking, "getpid", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.pl.Decide(mustAccess(t, tt.op, tt.arg))
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != (tt.errno == 0) || d.Errno != tt.errno {
				t.Fatalf("%s: allowed %v errno %v, want errno %v", d, d.Allowed, d.Errno, tt.errno)
			}
			if tt.why != "" && (d.Seccomp == nil || d.Seccomp.Why != tt.why) {
				t.Errorf("rule %v, want one saying %q", d.Seccomp, tt.why)
			}
		})
	}
	// fork does not exist on arm64: nothing to decide.
	a := mustAccess(t, "fork", "")
	a.Arch = ArchARM64
	if _, err := nonForking.Decide(a); !errors.Is(err, ErrAccess) {
		t.Errorf("fork on arm64: %v, want ErrAccess", err)
	}
	// A number above the reviewed table answers ENOSYS.
	pl := &Plan{ABI: 7}
	d, err := pl.Decide(Access{Op: OpSyscall, Syscall: "future", Arch: &Arch{Name: "test", ceiling: 10, syscalls: map[string]uint32{"future": 11}}})
	if err != nil || d.Allowed || !d.AboveTable || d.Errno != ENOSYS || !strings.Contains(d.String(), "above the reviewed table (10)") {
		t.Errorf("above the table: %s, %v", d, err)
	}
}

// TestDecideSyscallMatchesFilter: for every rule of several plans and
// arguments drawn from the rules' own values, Decide answers what the
// assembled BPF program answers.
func TestDecideSyscallMatchesFilter(t *testing.T) {
	plans := []*Plan{
		mustPlan(t, nil),
		mustPlan(t, []profile.Option{profile.Fork()}),
		mustPlan(t, []profile.Option{profile.Network(profile.NetworkLoopback, 8080)}, profile.GapLoopback),
		mustPlan(t, []profile.Option{profile.Network(profile.NetworkOn)}, profile.GapLocalServices),
		mustPlan(t, []profile.Option{profile.UnixSocket("/run/x.sock")}, profile.GapUnixSocketPath),
		mustPlan(t, []profile.Option{profile.Waive(profile.ProcessAccess)}),
	}
	rootPlan, err := Lower(mustPolicy(t), Env{Env: profile.Env{Home: "/home/u"}, Root: true})
	if err != nil {
		t.Fatal(err)
	}
	plans = append(plans, rootPlan)
	rng := rand.New(rand.NewPCG(1, 2))
	for i, pl := range plans {
		for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
			prog, err := Filter(arch, pl.Seccomp)
			if err != nil {
				t.Fatal(err)
			}
			insts, ok := bpf.Disassemble(prog)
			if !ok {
				t.Fatal("filter does not disassemble")
			}
			vm, err := bpf.NewVM(insts)
			if err != nil {
				t.Fatal(err)
			}
			var vals []uint32
			for _, r := range pl.Seccomp {
				for _, c := range r.Conds {
					vals = append(vals, c.Vals...)
					vals = append(vals, c.Mask, c.Mask&-c.Mask)
				}
			}
			vals = append(vals, 0, 1, 0xffffffff)
			for _, r := range pl.Seccomp {
				nr, ok := arch.Syscall(r.Syscall)
				if !ok {
					continue
				}
				for range 50 {
					var args [6]uint64
					for j := range args {
						switch rng.IntN(3) {
						case 0:
							args[j] = uint64(vals[rng.IntN(len(vals))])
						case 1:
							x, y := vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]
							args[j] = uint64(x | y)
						}
					}
					d, err := pl.Decide(Access{Op: OpSyscall, Syscall: r.Syscall, Args: args, Arch: arch})
					if err != nil {
						t.Fatal(err)
					}
					want := uint32(retAllow)
					if !d.Allowed {
						want = retErrno | uint32(d.Errno)
					}
					got, err := vm.Run(seccompData(arch.AuditArch, nr, args[:]...))
					if err != nil {
						t.Fatal(err)
					}
					if uint32(got) != want {
						t.Fatalf("plan %d %s %s%v: filter %#x, Decide %s", i, arch.Name, r.Syscall, args, got, d)
					}
				}
			}
		}
	}
}

// TestDecideSocket: connect and bind go through socket(2)'s seccomp rules,
// then Landlock's TCP port rules; a Unix socket through socket(AF_UNIX).
func TestDecideSocket(t *testing.T) {
	off := mustPlan(t, nil)
	loop := mustPlan(t, []profile.Option{profile.Network(profile.NetworkLoopback, 8080)}, profile.GapLoopback)
	on := mustPlan(t, []profile.Option{profile.Network(profile.NetworkOn)}, profile.GapLocalServices)
	unix := mustPlan(t, []profile.Option{profile.UnixSocket("/run/app.sock")}, profile.GapUnixSocketPath)
	tests := []struct {
		name    string
		pl      *Plan
		op, arg string
		errno   Errno
		seccomp bool
		port    int // the allowing TCP rule's, 0 none
		gap     profile.Gap
		text    string
	}{
		{name: "off", pl: off, op: "connect", arg: "443", errno: EPERM, seccomp: true},
		{name: "off, unix", pl: off, op: "connect", arg: "/run/docker.sock", errno: EPERM, seccomp: true},
		{name: "loopback port", pl: loop, op: "connect", arg: "127.0.0.1:8080", port: 8080, gap: profile.GapLoopback,
			text: "allowed: connect_tcp on port 8080 by Landlock rule tcp port 8080: bind_tcp|connect_tcp; Landlock does not see the host; not enforced (accepted gap network-loopback): Landlock filters TCP by port, not address: any host is reachable on an allowed port, and listen() without bind() listens on an unlisted ephemeral port on every interface (landlock-lsm/linux#15)"},
		{name: "loopback other port", pl: loop, op: "connect", arg: "9090", errno: EACCES,
			text: "denied (EACCES): no Landlock rule allows connect_tcp on port 9090"},
		{name: "loopback bind", pl: loop, op: "bind", arg: "[::1]:8080", port: 8080, gap: profile.GapLoopback},
		{name: "loopback bind other", pl: loop, op: "network-bind", arg: "8081", errno: EACCES},
		{name: "on, remote", pl: on, op: "connect", arg: "example.com:443",
			text: "allowed: the ruleset does not handle connect_tcp (network on)"},
		{name: "on, localhost", pl: on, op: "network-outbound", arg: "localhost:6379", gap: profile.GapLocalServices},
		{name: "unix allowed", pl: unix, op: "connect", arg: "/run/docker.sock", gap: profile.GapUnixSocketPath},
		{name: "unix, tcp off", pl: unix, op: "connect", arg: "80", errno: EPERM, seccomp: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.pl.Decide(mustAccess(t, tt.op, tt.arg))
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != (tt.errno == 0) || d.Errno != tt.errno || (d.Seccomp != nil) != tt.seccomp {
				t.Fatalf("%s: errno %v seccomp %v, want %v %v", d, d.Errno, d.Seccomp, tt.errno, tt.seccomp)
			}
			if (tt.port == 0) != (d.Net == nil) || d.Net != nil && int(d.Net.Port) != tt.port {
				t.Errorf("net rule %v, want port %d", d.Net, tt.port)
			}
			if tt.gap == "" && len(d.Gaps) > 0 || tt.gap != "" && (len(d.Gaps) == 0 || d.Gaps[0].Gap != tt.gap) {
				t.Errorf("gaps %v, want %q", d.Gaps, tt.gap)
			}
			if tt.text != "" && d.String() != tt.text {
				t.Errorf("String:\n got %s\nwant %s", d, tt.text)
			}
		})
	}
}

func TestParseAccess(t *testing.T) {
	good := []struct {
		op, arg string
		want    Access
	}{
		{"read", "/a/../b", Access{Op: OpRead, Path: "/b"}},
		{"file-write-unlink", "/x", Access{Op: OpRemove, Path: "/x"}},
		{"refer", "/x/y", Access{Op: OpRight, Right: FSRefer, Path: "/x/y"}},
		{"connect", "8080", Access{Op: OpConnect, Port: 8080}},
		{"connect", "db.internal:5432", Access{Op: OpConnect, Host: "db.internal", Port: 5432}},
		{"connect", "[::1]:22", Access{Op: OpConnect, Host: "::1", Port: 22, IPv6: true}},
		{"connect", "/run/x.sock", Access{Op: OpConnect, Path: "/run/x.sock"}},
		{"bind", "0.0.0.0:80", Access{Op: OpBind, Host: "0.0.0.0", Port: 80}},
		{"clone", "CLONE_NEWUSER|SIGCHLD", Access{Op: OpSyscall, Syscall: "clone", Args: [6]uint64{cloneNewUser | 17}}},
		{"fchmodat", "AT_FDCWD,/f,0644", Access{Op: OpSyscall, Syscall: "fchmodat", Args: [6]uint64{0xffffff9c, 0, 0o644}}},
		{"socket", "2,0x1,-1", Access{Op: OpSyscall, Syscall: "socket", Args: [6]uint64{2, 1, 0xffffffffffffffff}}},
		{"getpid", "", Access{Op: OpSyscall, Syscall: "getpid"}},
	}
	for _, tt := range good {
		got, err := ParseAccess(tt.op, tt.arg)
		if err != nil || got != tt.want {
			t.Errorf("ParseAccess(%q, %q) = %+v, %v; want %+v", tt.op, tt.arg, got, err, tt.want)
		}
	}
	bad := [][2]string{
		{"read", "relative"}, {"read", ""}, {"connect", "0"}, {"connect", "70000"}, {"connect", "::1:22"},
		{"connect", ":80"}, {"bind", "/run/x.sock"}, {"clone", "CLONE_NOPE"}, {"socket", "1,2,3,4,5,6,7"},
		{"mach-lookup", "com.apple.x"}, {"no_such_call", ""},
	}
	for _, tt := range bad {
		if a, err := ParseAccess(tt[0], tt[1]); !errors.Is(err, ErrAccess) {
			t.Errorf("ParseAccess(%q, %q) = %+v, %v; want ErrAccess", tt[0], tt[1], a, err)
		}
	}
}
