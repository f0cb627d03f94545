package tests

// Escape canaries for the network, message-queue and newer-system-call
// findings of a red-team of the Linux cage (Landlock-only tier): each ran
// first against the filter without its rule and showed the escape open.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// pyPrelude is pyErrno's prelude, for snippets run by startPy.
const pyPrelude = "import ctypes, errno, os, socket, sys, time\n" +
	"libc = ctypes.CDLL(None, use_errno=True)\n" +
	"def r(v):\n" +
	"    print('ok' if v >= 0 else errno.errorcode[ctypes.get_errno()], flush=True)\n"

// startPy starts a Python snippet in c and returns the first line it
// prints; the run is ended when the test ends. The snippet keeps running
// (it should sleep) while the test looks at what it did from outside.
func startPy(t *testing.T, c *cage.Cage, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	cmd := c.Command(ctx, python, "-c", pyPrelude+code)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if line == "" {
		cancel()
		cmd.Wait()
		t.Fatalf("python printed nothing: %s", errb.String())
	}
	return strings.TrimSpace(line)
}

// loopbackCage is a loopback cage allowing one TCP port, one that nothing
// listens on (not other).
func loopbackCage(t *testing.T, other int) *cage.Cage {
	t.Helper()
	testenv.RequireLandlockABI(t, 4, "TCP port rules")
	allowed := other + 1
	if allowed > 65535 {
		allowed = other - 1
	}
	return newCage(t, policy(t, profile.Network(profile.NetworkLoopback, allowed)), cage.WithHome(tempHome(t)), cage.AcceptGaps(profile.GapLoopback))
}

// accepted reports whether ln accepts a connection within d.
func accepted(t *testing.T, ln *net.TCPListener, d time.Duration) bool {
	t.Helper()
	ln.SetDeadline(time.Now().Add(d))
	conn, err := ln.Accept()
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// TestLinuxEscapeFastOpen: with loopback and one TCP port
// allowed, TCP Fast Open does not connect to another port. sendto or
// sendmsg with MSG_FASTOPEN connects from inside the send, past Landlock's
// connect hook (landlock-lsm/linux#41); seccomp refuses the flag on
// sendto, sendmsg and sendmmsg, and the TCP_FASTOPEN_CONNECT option, while
// ports are restricted.
func TestLinuxEscapeFastOpen(t *testing.T) {
	requireCage(t)
	needPython(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ln := l.(*net.TCPListener)
	other := ln.Addr().(*net.TCPAddr).Port
	c := loopbackCage(t, other)
	try := func(call string) string {
		return fmt.Sprintf("s = socket.socket()\ntry:\n    %s\n    print('connected')\nexcept OSError as e:\n    print(errno.errorcode.get(e.errno, e))", call)
	}
	dst := fmt.Sprintf("('127.0.0.1', %d)", other)
	for name, code := range map[string]string{
		"connect (control)":                try("s.connect(" + dst + ")"),
		"sendto MSG_FASTOPEN":              try("s.sendto(b'x', 0x20000000, " + dst + ")"),
		"sendmsg MSG_FASTOPEN":             try("s.sendmsg([b'x'], [], 0x20000000, " + dst + ")"),
		"sendto MSG_FASTOPEN|MSG_DONTWAIT": try("s.sendto(b'x', 0x20000040, " + dst + ")"),
		"TCP_FASTOPEN_CONNECT":             try("s.setsockopt(socket.IPPROTO_TCP, 30, 1)\n    s.connect(" + dst + ")"),
	} {
		want := "EPERM"
		if name == "connect (control)" {
			want = "EACCES" // Landlock
		}
		if got := pyErrno(t, c, code); got != want {
			t.Errorf("%s to port %d, not allowed: %s, want %s", name, other, got, want)
		}
		if accepted(t, ln, 50*time.Millisecond) {
			t.Errorf("%s: the listener on port %d accepted a connection from the cage", name, other)
		}
	}
	// Other send flags and TCP options still pass.
	if got := pyErrno(t, c, "s = socket.socket()\ns.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\nprint('ok')"); got != "ok" {
		t.Errorf("TCP_NODELAY: %s, want ok", got)
	}
}

// mqOpen and mqUnlink are mq_open(3) and mq_unlink(3) without libc: the
// kernel takes the name without its leading slash.
func mqOpen(name string, flags int, mode uint32) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(flags), uintptr(mode), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func mqUnlink(name string) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0); e != 0 {
		return e
	}
	return nil
}

// TestLinuxEscapePosixMQ: POSIX message queues are host-wide
// objects checked by owner and mode only (mq_overview(7)), like System V
// IPC, and Landlock does not see them (mq_open creates the queue before
// any file open is checked). The cage cannot delete a queue another
// process of the user made, read or write one, or leave one behind:
// seccomp refuses the mq_* calls under the process-access class.
func TestLinuxEscapePosixMQ(t *testing.T) {
	requireCage(t)
	needPython(t)
	outside := "procage-mq-out-" + strconv.Itoa(os.Getpid())
	fd, err := mqOpen(outside, unix.O_CREAT|unix.O_RDWR, 0o600)
	if err != nil {
		testenv.Skip(t, testenv.ReasonNoKernelFeature, "mq_open: "+err.Error())
	}
	unix.Close(fd)
	defer mqUnlink(outside)
	left := "procage-mq-in-" + strconv.Itoa(os.Getpid())
	defer mqUnlink(left)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	// In order: the unlink last, so the open sees the queue.
	for _, code := range []string{
		"r(libc.mq_open(b'/" + outside + "', os.O_RDWR, 0, None))",
		"r(libc.mq_open(b'/" + left + "', os.O_CREAT|os.O_RDWR, 0o600, None))",
		"r(libc.syscall(" + strconv.Itoa(unix.SYS_MQ_GETSETATTR) + ", 0, None, ctypes.create_string_buffer(64)))",
		// The system call: glibc's mq_unlink turns EPERM into EACCES.
		"r(libc.syscall(" + strconv.Itoa(unix.SYS_MQ_UNLINK) + ", b'" + outside + "'))",
	} {
		if got := pyErrno(t, c, code); got != "EPERM" {
			t.Errorf("%s: %s, want EPERM", code, got)
		}
	}
	if fd, err := mqOpen(outside, unix.O_RDONLY, 0); err != nil {
		t.Errorf("the queue made outside is gone: %v", err)
	} else {
		unix.Close(fd)
	}
	if fd, err := mqOpen(left, unix.O_RDONLY, 0); err == nil {
		unix.Close(fd)
		t.Errorf("the cage left the queue %s behind", left)
	}
	// Waiving the class lifts it.
	w := newCage(t, policy(t, profile.Waive(profile.ProcessAccess)), cage.WithHome(tempHome(t)))
	if got := pyErrno(t, w, "r(libc.syscall("+strconv.Itoa(unix.SYS_MQ_UNLINK)+", b'"+outside+"'))"); got != "ok" {
		t.Errorf("mq_unlink with process-access waived: %s, want ok", got)
	}
}

// fileAttr is struct file_attr (include/uapi/linux/fs.h, Linux 6.17).
type fileAttr struct {
	XFlags     uint64
	ExtSize    uint32
	NExtents   uint32
	ProjID     uint32
	CowExtSize uint32
}

// fileGetattr is file_getattr(2) of p.
func fileGetattr(p string) (fileAttr, error) {
	var fa fileAttr
	b, err := unix.BytePtrFromString(p)
	if err != nil {
		return fa, err
	}
	dirfd := unix.AT_FDCWD
	if _, _, e := unix.Syscall6(unix.SYS_FILE_GETATTR, uintptr(dirfd), uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(&fa)), unsafe.Sizeof(fa), 0, 0); e != 0 {
		return fa, e
	}
	return fa, nil
}

// TestLinuxEscapeNewSyscalls: system calls newer than the
// rules reach what the older calls are refused: file_setattr (Linux 6.17)
// sets inode flags by path, with no open for Landlock to check, on a file
// outside the policy; listmount and statmount list the mount table, which
// Base V1's lack of /proc hides. seccomp answers them ENOSYS (callers fall
// back to the ioctl on an open descriptor, and to /proc/self/mountinfo,
// which Landlock governs).
func TestLinuxEscapeNewSyscalls(t *testing.T) {
	requireCage(t)
	needPython(t)
	f := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := fileGetattr(f)
	if errors.Is(err, unix.ENOSYS) {
		testenv.Skip(t, testenv.ReasonNoKernelFeature, "file_getattr: ENOSYS (Linux before 6.17)")
	} else if err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	// FS_XFLAG_NODUMP (0x80): harmless, settable by the owner.
	setattr := "b = ctypes.create_string_buffer(24)\nctypes.c_uint64.from_buffer(b).value = 0x80\nr(libc.syscall(469, -100, b'" + f + "', b, 24, 0))"
	for name, code := range map[string]string{
		"file_setattr": setattr,
		"file_getattr": "r(libc.syscall(468, -100, b'" + f + "', ctypes.create_string_buffer(24), 24, 0))",
		"listmount":    "req = (ctypes.c_uint64*4)(24, 2**64-1, 0, 0)\nr(libc.syscall(458, req, (ctypes.c_uint64*64)(), 64, 0))",
		"statmount":    "ids = (ctypes.c_uint64*64)()\nlibc.syscall(458, (ctypes.c_uint64*4)(24, 2**64-1, 0, 0), ids, 64, 0)\nr(libc.syscall(457, (ctypes.c_uint64*4)(24, ids[0] or 1, 1, 0), ctypes.create_string_buffer(4096), 4096, 0))",
		"listns":       "r(libc.syscall(470, ctypes.create_string_buffer(64), (ctypes.c_uint64*8)(), 8, 0))",
		"unnumbered":   "r(libc.syscall(600))",
	} {
		if got := pyErrno(t, c, code); got != "ENOSYS" {
			t.Errorf("%s: %s, want ENOSYS", name, got)
		}
	}
	after, err := fileGetattr(f)
	if err != nil {
		t.Fatal(err)
	}
	if after.XFlags != before.XFlags {
		t.Errorf("the cage changed %s's flags: %#x -> %#x", f, before.XFlags, after.XFlags)
	}
}

// TestLinuxGapLoopbackListenAutobind documents what accepting the
// network-loopback gap also means: listen() on a socket never bound binds
// an ephemeral port on every interface itself, with no bind for Landlock
// to check (landlock-lsm/linux#15), and accepts connections there. BPF
// cannot see whether a socket is bound. If this starts failing, the kernel
// closed it: update the gap's text and docs/linux-backend.md.
func TestLinuxGapLoopbackListenAutobind(t *testing.T) {
	requireCage(t)
	needPython(t)
	c := loopbackCage(t, 1)
	line := startPy(t, c, "s = socket.socket()\ns.listen()\nprint(s.getsockname()[1], flush=True)\ns.settimeout(20)\nc, _ = s.accept()\nc.sendall(b'from the cage')\ntime.sleep(1)")
	port, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("listen without bind: %q (the gap may be closed: update docs/linux-backend.md)", line)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatalf("connect to the cage's unlisted port %d: %v (the gap may be closed: update docs/linux-backend.md)", port, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(conn)
	if string(b) != "from the cage" {
		t.Errorf("read %q from the cage's listener", b)
	}
}

// TestLinuxEscapeNetlinkProtocols: with the network on, only
// NETLINK_ROUTE sockets (interface and address lookups) can be made.
// NETLINK_SOCK_DIAG lists every socket on the host, NETLINK_CONNECTOR
// streams every process's fork, exec and exit (proc connector), and
// NETLINK_AUDIT and the rest are kernel surface a program never needs.
func TestLinuxEscapeNetlinkProtocols(t *testing.T) {
	requireCage(t)
	needPython(t)
	c := newCage(t, policy(t, profile.Network(profile.NetworkOn, profile.AnyPort), profile.ListenAnyInterface()), cage.WithHome(tempHome(t)))
	for proto, want := range map[int]string{0: "ok", 4: "EPERM", 11: "EPERM", 9: "EPERM", 15: "EPERM", 16: "EPERM"} {
		for _, typ := range []string{"socket.SOCK_RAW", "socket.SOCK_DGRAM|socket.SOCK_CLOEXEC"} {
			code := fmt.Sprintf("r(libc.socket(socket.AF_NETLINK, %s, %d))", typ, proto)
			if got := pyErrno(t, c, code); got != want {
				t.Errorf("netlink protocol %d (%s): %s, want %s", proto, typ, got, want)
			}
		}
	}
	// Interface lookups (getaddrinfo's AI_ADDRCONFIG, ip addr) still work.
	if got := pyErrno(t, c, "print(len(socket.if_nameindex()) > 0 and 'ok')"); got != "ok" {
		t.Errorf("if_nameindex over NETLINK_ROUTE: %s, want ok", got)
	}
}

// TestLinuxEscapeLease: a lease (fcntl F_SETLEASE) on a file the
// cage may only read stalls every outside process that opens it for
// writing, up to /proc/sys/fs/lease-break-time (45 s) each time. seccomp
// refuses F_SETLEASE under the process-access class.
func TestLinuxEscapeLease(t *testing.T) {
	requireCage(t)
	needPython(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "shared")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t, profile.Read(dir)), cage.WithHome(tempHome(t)))
	got := startPy(t, c, "import fcntl\nfd = os.open('"+f+"', os.O_RDONLY)\ntry:\n    fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)\n    print('ok', flush=True)\nexcept OSError as e:\n    print(errno.errorcode[e.errno], flush=True)\ntime.sleep(30)")
	if got != "EPERM" {
		t.Errorf("F_SETLEASE F_RDLCK on a readable file: %s, want EPERM", got)
	}
	// A conflicting lease makes a non-blocking open fail EWOULDBLOCK.
	fd, err := unix.Open(f, unix.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Errorf("an outside writer's open: %v (the cage holds a lease)", err)
	} else {
		unix.Close(fd)
	}
}

// TestLinuxEscapeAbstractBind: with no socket family allowed, a
// socketpair socket cannot bind an abstract Unix name, which would squat
// it for an outside server (EADDRINUSE): Landlock's abstract-socket scope
// covers connect and send, not bind. seccomp refuses bind() when the policy
// allows no socket family.
func TestLinuxEscapeAbstractBind(t *testing.T) {
	requireCage(t)
	needPython(t)
	name := "procage-squat-" + strconv.Itoa(os.Getpid())
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	got := startPy(t, c, "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)\ntry:\n    a.bind('\\0"+name+"')\n    print('ok', flush=True)\nexcept OSError as e:\n    print(errno.errorcode[e.errno], flush=True)\ntime.sleep(30)")
	if got != "EPERM" {
		t.Errorf("bind of a socketpair socket to an abstract name: %s, want EPERM", got)
	}
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Errorf("an outside server on @%s: %v", name, err)
	} else {
		ln.Close()
	}
}

// TestLinuxGapAbstractBindWithNetwork documents what stays open when
// the policy allows a socket family (loopback here): bind() must then
// work, and BPF cannot tell a socketpair socket's family from an IP one's
// (the address is behind a pointer), so an abstract Unix name can still
// be squatted. A private network namespace (its own abstract names)
// closes it. If this starts failing, update docs/linux-backend.md.
func TestLinuxGapAbstractBindWithNetwork(t *testing.T) {
	requireCage(t)
	needPython(t)
	c := loopbackCage(t, 1)
	name := "procage-squat-net-" + strconv.Itoa(os.Getpid())
	code := "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)\ntry:\n    a.bind('\\0" + name + "')\n    print('ok')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])"
	if got := pyErrno(t, c, code); got != "ok" {
		t.Errorf("abstract bind of a socketpair socket in loopback mode: %s, want ok (the gap may be closed: update docs/linux-backend.md)", got)
	}
}

// TestLinuxEscapeTerminalSize: the cage cannot resize the
// terminal it was given (TIOCSWINSZ): the caller shares it, and the kernel
// sends SIGWINCH to the terminal's foreground process group, the caller's.
// seccomp refuses TIOCSWINSZ as it does TIOCSTI; reading the size works.
func TestLinuxEscapeTerminalSize(t *testing.T) {
	requireCage(t)
	needPython(t)
	master, slave := openPTY(t)
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}); err != nil {
		t.Fatal(err)
	}
	// The terminal is granted read-write per spawn, which the trust-handoff
	// class counts as a writable tree.
	c := newCage(t, policy(t, profile.Waive(profile.TrustHandoff)), cage.WithHome(tempHome(t)))
	code := "import fcntl, struct, termios\n" +
		"print(struct.unpack('HHHH', fcntl.ioctl(0, termios.TIOCGWINSZ, bytes(8)))[:2])\n" +
		"try:\n    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 7, 9, 0, 0))\n    print('ok')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])"
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, python, "-c", pyPrelude+code)
	var out, errb strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("python: %v (%s)", err, errb.String())
	}
	if got := strings.Fields(strings.ReplaceAll(out.String(), "\n", " ")); len(got) != 3 || got[0]+got[1] != "(24,80)" || got[2] != "EPERM" {
		t.Errorf("TIOCGWINSZ then TIOCSWINSZ on the terminal: %q, want (24, 80) then EPERM", out.String())
	}
	ws, err := unix.IoctlGetWinsize(int(master.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Row != 24 || ws.Col != 80 {
		t.Errorf("the cage resized the terminal to %dx%d", ws.Row, ws.Col)
	}
}

// TestLinuxGapProcessEnumeration documents what stays open in the
// Landlock-only tier: the cage learns which processes exist and who owns
// them. kill(pid, 0) to a process outside the domain fails EPERM under
// signal scoping where a free pid gives ESRCH, and stat of /proc/PID needs
// no Landlock right (stat is not restricted; landlock.h). A pid namespace
// closes both. If this starts failing, update docs/linux-backend.md.
func TestLinuxGapProcessEnumeration(t *testing.T) {
	requireCage(t)
	needPython(t)
	victim := startOutside(t, "/bin/sleep", "60")
	pid := strconv.Itoa(victim.Pid)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	code := "def k(p):\n    try:\n        os.kill(p, 0)\n        return 'ok'\n    except OSError as e:\n        return errno.errorcode[e.errno]\n" +
		"free = next(p for p in range(4194304, 1, -1) if not os.path.exists('/proc/%d' % p))\n" +
		"print(k(" + pid + "), k(free), os.stat('/proc/" + pid + "').st_uid)"
	want := fmt.Sprintf("EPERM ESRCH %d", os.Getuid())
	if got := pyErrno(t, c, code); got != want {
		t.Errorf("kill(%s, 0), kill(free, 0), stat /proc/%s: %q, want %q (the gap may be closed: update docs/linux-backend.md)", pid, pid, got, want)
	}
}

// startOutside starts a process outside the cage, killed when the test ends.
func startOutside(t *testing.T, name string, args ...string) *os.Process {
	t.Helper()
	p, err := os.StartProcess(name, append([]string{name}, args...), &os.ProcAttr{Files: []*os.File{nil, nil, nil}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Signal(syscall.SIGKILL)
		p.Wait()
	})
	return p
}
