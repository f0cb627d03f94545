package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// accessHelper makes one access, in procage explain's words (os.Args[1:]:
// OP ARG), with the system calls the words name, and prints "ok" or the
// errno's name. An exec that works becomes the program it runs, which
// prints nothing.
func accessHelper() int {
	if len(os.Args) != 3 {
		fmt.Println("usage: OP ARG")
		return 2
	}
	op, arg := os.Args[1], os.Args[2]
	a, err := linux.ParseAccess(op, arg)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	fmt.Println(errnoWord(doAccess(a, arg)))
	return 0
}

func errnoWord(err error) string {
	switch err {
	case nil:
		return "ok"
	case syscall.EACCES:
		return "EACCES"
	case syscall.EPERM:
		return "EPERM"
	case syscall.ENOSYS:
		return "ENOSYS"
	}
	return fmt.Sprintf("other (%v)", err)
}

func doAccess(a linux.Access, arg string) error {
	p := a.Path
	closeFD := func(fd int, err error) error {
		if err == nil {
			syscall.Close(fd)
		}
		return err
	}
	switch a.Op {
	case linux.OpRead:
		return closeFD(syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0))
	case linux.OpList:
		return closeFD(syscall.Open(p, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0))
	case linux.OpWrite:
		return closeFD(syscall.Open(p, syscall.O_WRONLY|syscall.O_CLOEXEC, 0))
	case linux.OpCreate:
		return closeFD(syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o644))
	case linux.OpTruncate:
		return syscall.Truncate(p, 0)
	case linux.OpExec:
		return syscall.Exec(p, []string{p}, nil)
	case linux.OpMkdir:
		return syscall.Mkdir(p, 0o755)
	case linux.OpRemove:
		return syscall.Unlink(p)
	case linux.OpRmdir:
		return syscall.Rmdir(p)
	case linux.OpSymlink:
		return syscall.Symlink("target", p)
	case linux.OpMkfifo:
		return syscall.Mkfifo(p, 0o644)
	case linux.OpConnect, linux.OpBind:
		family, sa := syscall.AF_INET, syscall.Sockaddr(&syscall.SockaddrInet4{Port: int(a.Port), Addr: [4]byte{127, 0, 0, 1}})
		if a.Path != "" {
			family, sa = syscall.AF_UNIX, &syscall.SockaddrUnix{Name: a.Path}
		}
		fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		if a.Op == linux.OpBind {
			return syscall.Bind(fd, sa)
		}
		return syscall.Connect(fd, sa)
	case linux.OpSyscall:
		nr, ok := linux.ArchByGOARCH(runtime.GOARCH).Syscall(a.Syscall)
		if !ok {
			return fmt.Errorf("no system call %s here", a.Syscall)
		}
		// The words' paths become pointers (seccomp sees none of them).
		args := a.Args
		var keep [][]byte
		for i, v := range strings.Split(arg, ",") {
			if strings.HasPrefix(v, "/") {
				b := append([]byte(v), 0)
				keep = append(keep, b)
				args[i] = uint64(uintptr(unsafe.Pointer(&b[0])))
			}
		}
		r, _, e := syscall.Syscall6(uintptr(nr), uintptr(args[0]), uintptr(args[1]), uintptr(args[2]), uintptr(args[3]), uintptr(args[4]), uintptr(args[5]))
		runtime.KeepAlive(keep)
		if e != 0 {
			return e
		}
		if a.Syscall == "socket" {
			syscall.Close(int(r))
		}
		return nil
	}
	return fmt.Errorf("op %s not made here", a.Op)
}

// TestLinuxDecideMatchesKernel: for a set of policies and accesses, what
// (*linux.Plan).Decide says the cage does (procage explain --backend linux)
// is what the real cage does: each access is made by a caged child, and
// the answer (allowed, or the errno: EACCES from Landlock, EPERM or ENOSYS
// from seccomp) must be Decide's, and the table's.
func TestLinuxDecideMatchesKernel(t *testing.T) {
	requireCage(t)
	root := tempHome(t)
	home := filepath.Join(root, "home")
	mk := func(dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	put := func(name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	prog := func(name string) {
		b, err := os.ReadFile(trueBin)
		if err != nil {
			t.Fatal(err)
		}
		put(name, 0o755)
		if err := os.WriteFile(filepath.Join(root, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("data/sub", "data/out/gone", "tools/cache", "none", "home/.ssh", "lit")
	put("data/f", 0o644)
	put("data/out/old", 0o644)
	put("lit/file.txt", 0o644)
	put("none/f", 0o644)
	put("home/.ssh/id", 0o600)
	put("home/notes", 0o644)
	prog("tools/prog")
	prog("tools/cache/prog")
	prog("data/prog")

	// TCP: a listener on a port the loopback policy allows, a free port it
	// also allows (bind), and a port it does not.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go acceptAll(ln)
	listening := ln.Addr().(*net.TCPAddr).Port
	free, other := freePort(t), freePort(t)
	sock := filepath.Join(root, "app.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer uln.Close()
	go acceptAll(uln)

	r := func(p string) string { return filepath.Join(root, p) }
	port := strconv.Itoa
	isRoot := os.Geteuid() == 0
	type access struct {
		op, arg string
		allowed bool
	}
	policies := []struct {
		name   string
		opts   []profile.Option
		accept []profile.Gap
		acc    []access
	}{
		{"trees", []profile.Option{profile.Read(r("data")), profile.ReadWrite(r("data/out")), profile.Exec(r("tools")),
			profile.ReadWrite(r("tools/cache")), profile.FS(profile.AccessWrite, profile.Literal, r("lit/file.txt"))},
			[]profile.Gap{profile.GapTrustHandoff}, []access{
				{"read", r("data/f"), true},
				{"list", r("data/sub"), true},
				{"write", r("data/f"), false},
				{"create", r("data/new"), false},
				{"create", r("data/out/new"), true},
				{"mkdir", r("data/out/d"), true},
				{"remove", r("data/out/old"), true},
				{"rmdir", r("data/out/gone"), true},
				{"symlink", r("data/out/l"), true},
				{"mkfifo", r("data/out/p"), true},
				{"mkdir", r("data/d"), false},
				{"truncate", r("data/f"), false},
				{"exec", r("tools/prog"), true},
				{"exec", r("tools/cache/prog"), true}, // execute from tools, read_file from either
				{"exec", r("data/prog"), false},
				{"write", r("lit/file.txt"), true},
				{"truncate", r("lit/file.txt"), true},
				{"remove", r("lit/file.txt"), false}, // a file rule is not its directory's
				{"read", r("none/f"), false},
				{"list", root, false},
				{"read", "/usr/share/zoneinfo", true},
				{"read", "/etc/hostname", true},
				{"write", "/etc/hostname", false},
			}},
		{"secrets beneath", []profile.Option{profile.Read(filepath.Join(home, ".ssh"))}, nil, []access{
			{"read", filepath.Join(home, ".ssh/id"), false},
			{"read", filepath.Join(home, "notes"), false},
		}},
		{"secrets inside, accepted", []profile.Option{profile.Read(home)}, []profile.Gap{profile.GapSecrets}, []access{
			{"read", filepath.Join(home, ".ssh/id"), true},
			{"read", filepath.Join(home, "notes"), true},
			{"write", filepath.Join(home, "notes"), false},
		}},
		{"network off", nil, nil, []access{
			{"connect", port(listening), false},
			{"connect", sock, false},
			{"socket", "AF_INET,SOCK_DGRAM", false},
			{"socket", "AF_UNIX,SOCK_STREAM", false},
			{"unshare", "CLONE_NEWUSER", false},
			{"prlimit64", "1,7", false},
			{"prlimit64", "0,7", true},
			{"getpid", "", true},
			{"openat2", "", false},
			{"ioctl", "0,TIOCSTI", false},
			{"chmod", r("data/f") + ",04755", false},
			{"chmod", r("data/f") + ",0644", !isRoot},
		}},
		{"loopback", []profile.Option{profile.Network(profile.NetworkLoopback, listening, free)}, []profile.Gap{profile.GapLoopback}, []access{
			{"connect", port(listening), true},
			{"connect", port(other), false},
			{"bind", port(free), true},
			{"bind", port(other), false},
			{"socket", "AF_INET,SOCK_DGRAM", false},
			{"connect", sock, false},
		}},
		{"unix socket", []profile.Option{profile.UnixSocket(sock)}, []profile.Gap{profile.GapUnixSocketPath}, []access{
			{"connect", sock, true},
			{"connect", port(listening), false},
		}},
	}
	if runtime.GOARCH == "amd64" {
		policies[3].acc = append(policies[3].acc, access{"fork", "", false})
	}
	bin := testBinaryDir(t)
	for _, pol := range policies {
		t.Run(pol.name, func(t *testing.T) {
			c := newCage(t, policy(t, append(pol.opts, profile.Exec(bin))...), cage.WithHome(home), cage.AcceptGaps(pol.accept...))
			pl := c.LinuxPlan()
			for _, tt := range pol.acc {
				a, err := linux.ParseAccess(tt.op, tt.arg)
				if err != nil {
					t.Fatal(err)
				}
				d, err := pl.Decide(a)
				if err != nil {
					t.Fatal(err)
				}
				want := "ok"
				if !d.Allowed {
					want = d.Errno.String()
				}
				got := caged(t, c, tt.op, tt.arg)
				if got != want {
					t.Errorf("%s %s: the kernel says %s, Decide %s", tt.op, tt.arg, got, d)
				}
				if d.Allowed != tt.allowed {
					t.Errorf("%s %s: Decide: %s; want allowed %v", tt.op, tt.arg, d, tt.allowed)
				}
			}
		})
	}
}

// caged makes the access in a child of c and returns its word.
func caged(t *testing.T, c *cage.Cage, op, arg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, os.Args[0], op, arg)
	cmd.Env = []string{helperEnv + "=access"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	word := strings.TrimSpace(string(out))
	switch {
	case err != nil:
		return fmt.Sprintf("failed (%v, %q)", err, stderr.String())
	case word == "" && op == "exec":
		return "ok" // the program ran
	}
	return word
}

func acceptAll(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			io.Copy(io.Discard, conn)
			conn.Close()
		}()
	}
}

// freePort returns a TCP port nothing listens on (one the kernel just
// handed out and took back).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestLinuxDecideRightsByHand: rules no policy lowers to (execute without
// read_file, read_file without execute; read_dir on each, as Landlock
// wants of a directory rule) in a real ruleset: Decide says execve needs
// both, and the kernel agrees.
func TestLinuxDecideRightsByHand(t *testing.T) {
	requireCage(t)
	root := tempHome(t)
	b, err := os.ReadFile(trueBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"x", "r", "xr"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "prog"), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := newCage(t, policy(t), cage.WithHome(filepath.Join(root, "home")))
	pl := *c.LinuxPlan()
	pl.Rules = append(slices.Clone(pl.Rules),
		linux.PathRule{Path: filepath.Join(root, "x"), Access: linux.FSExecute | linux.FSReadDir, Layer: linux.LayerPolicy},
		linux.PathRule{Path: filepath.Join(root, "r"), Access: linux.FSReadFile | linux.FSReadDir, Layer: linux.LayerPolicy},
		linux.PathRule{Path: filepath.Join(root, "xr"), Access: linux.FSExecute | linux.FSReadFile | linux.FSReadDir, Layer: linux.LayerPolicy})
	// The base's links (/bin on merged-/usr systems) resolved, as the cage
	// does; a missing path is skipped.
	held, err := linuxsandbox.OpenRules(pl.Rules, func(r linux.PathRule) (string, error) {
		if p, err := filepath.EvalSymlinks(r.Path); err == nil {
			return p, nil
		}
		return r.Path, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	rs, err := linuxsandbox.BuildRuleset(&pl, held)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	prog, err := linuxsandbox.BuildProgram(&pl)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := linuxsandbox.NewCalls(&pl, rs, prog, pl.Rules)
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, tt := range []struct {
		dir     string
		allowed bool
	}{{"x", false}, {"r", false}, {"xr", true}} {
		target := filepath.Join(root, tt.dir, "prog")
		d, err := pl.Decide(linux.Access{Op: linux.OpExec, Path: target})
		if err != nil {
			t.Fatal(err)
		}
		fd := null.Fd()
		pid, err := forkexec.Start(&forkexec.Attr{Path: target, Args: []string{"prog"}, Files: []uintptr{fd, fd, fd}, Calls: calls.Calls})
		calls.KeepAlive()
		got := "ok"
		if err != nil {
			se, ok := errors.AsType[*forkexec.StepError](err)
			if !ok || se.Step != forkexec.StepExec {
				t.Fatalf("%s: %v", tt.dir, err)
			}
			got = errnoWord(se.Err)
		} else if ws, err := forkexec.Wait(pid); err != nil || ws.ExitStatus() != 0 {
			t.Fatalf("%s: ran, then %v %v", tt.dir, ws, err)
		}
		want := "ok"
		if !d.Allowed {
			want = d.Errno.String()
		}
		if got != want || d.Allowed != tt.allowed {
			t.Errorf("exec under %s rights: the kernel says %s, Decide %s (want allowed %v)", tt.dir, got, d, tt.allowed)
		}
	}
}
