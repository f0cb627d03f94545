package tests

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// Each TestEscape<Class> attempts one escape from inside a cage. The home
// directory is a stand-in under the test's temp dir (cage.WithHome), so the
// real one is never touched.

func writeFile(tb testing.TB, path, data string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// firstWorkingOutside returns the first candidate that succeeds outside any
// cage, and fails the test if none does.
func firstWorkingOutside(tb testing.TB, candidates ...[]string) []string {
	tb.Helper()
	var tried []string
	for _, argv := range candidates {
		out, err := outside(argv...)
		if err == nil {
			return argv
		}
		tried = append(tried, strings.Join(argv, " ")+": "+err.Error()+": "+strings.TrimSpace(out))
	}
	tb.Fatalf("no control run worked outside the cage, so a refusal inside would prove nothing:\n%s", strings.Join(tried, "\n"))
	return nil
}

// TestEscapeSecrets: with the whole home readable, a private key is not,
// nor in another case.
func TestEscapeSecrets(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	writeFile(t, filepath.Join(home, ".ssh", "id_rsa"), "KEY")
	for _, n := range []string{".npmrc", ".git-credentials", ".config/gh/hosts.yml", "Library/Cookies/Cookies.binarycookies"} {
		writeFile(t, filepath.Join(home, n), "TOKEN")
	}
	c := newCage(t, policy(t, profile.Read(home)), cage.WithHome(home))
	for _, p := range []string{
		filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, ".SSH", "ID_RSA"),
		filepath.Join(home, ".npmrc"), filepath.Join(home, ".git-credentials"),
		filepath.Join(home, ".config/gh/hosts.yml"), filepath.Join(home, "Library/Cookies/Cookies.binarycookies"),
	} {
		o, e, err := run(t, c, "/bin/cat", p)
		mustRefuse(t, "reading "+p, o, e, err)
	}
}

// TestEscapeTrustHandoffGit: inside a writable tree, a git hook
// cannot be written.
func TestEscapeTrustHandoffGit(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	tree := filepath.Join(home, "project")
	if err := os.MkdirAll(filepath.Join(tree, ".git", "hooks"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t, profile.ReadWrite(tree)), cage.WithHome(home))
	o, e, err := run(t, c, "/bin/sh", "-c", "echo ok > "+filepath.Join(tree, "allowed.txt"))
	if err != nil {
		t.Fatalf("writing inside the writable tree: %v (%s%s)", err, o, e)
	}
	hook := filepath.Join(tree, ".git", "hooks", "pre-commit")
	o, e, err = run(t, c, "/bin/sh", "-c", "echo evil > "+hook)
	mustRefuse(t, "writing a git hook", o, e, err)
}

// TestEscapeGitRoutes: every route by which a write inside a
// writable tree makes the user's git run a program is refused, while the
// data an ordinary commit writes is not.
func TestEscapeGitRoutes(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	tree := filepath.Join(home, "project")
	for _, d := range []string{".git/objects/ab", ".git/refs/heads", ".git/modules/sub/hooks", ".git/worktrees/wt", ".git/info", "plain"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c := newCage(t, policy(t, profile.ReadWrite(tree)), cage.WithHome(home))
	for _, p := range []string{
		".git/commondir", ".git/modules/sub/config", ".git/modules/sub/hooks/post-checkout",
		".git/worktrees/wt/commondir", ".git/worktrees/wt/config.worktree", ".git/info/attributes",
		".git/config", "plain/.git", "plain/.GIT",
		"HEAD", "plain/HEAD", // a planted bare repository (git setup.c, is_git_directory)
	} {
		o, e, err := run(t, c, "/bin/sh", "-c", "echo 'gitdir: ../x' > "+filepath.Join(tree, p))
		mustRefuse(t, "writing "+p, o, e, err)
	}
	o, e, err := run(t, c, "/bin/mkdir", filepath.Join(tree, "plain", ".git"))
	mustRefuse(t, "creating a .git directory", o, e, err)
	// A directory built in the carve-out cannot carry a .git into the worktree.
	o, e, err = run(t, c, "/bin/sh", "-c", "mkdir -p "+filepath.Join(tree, ".git/objects/t/.git")+" && mv "+
		filepath.Join(tree, ".git/objects/t")+" "+filepath.Join(tree, "src"))
	mustRefuse(t, "moving a directory out of .git/objects", o, e, err)
	// Nor can one there hold a git directory's config or hooks.
	for _, p := range []string{".git/refs/x/config", ".git/refs/x/commondir", ".git/objects/t/hooks/pre-commit"} {
		o, e, err := run(t, c, "/bin/sh", "-c", "mkdir -p "+filepath.Dir(filepath.Join(tree, p))+" 2>/dev/null; echo x > "+filepath.Join(tree, p))
		mustRefuse(t, "writing "+p, o, e, err)
	}
	for _, p := range []string{".git/objects/ab/cdef", ".git/index.lock", ".git/refs/heads/main.lock", ".git/COMMIT_EDITMSG", ".git/HEAD"} {
		if o, e, err := run(t, c, "/bin/sh", "-c", "echo data > "+filepath.Join(tree, p)); err != nil {
			t.Errorf("writing git's data %s: %v (%s%s)", p, err, o, e)
		}
	}
}

// TestEscapeProcessAccess: another process's arguments cannot be
// read (ps is setuid and refused; the argument sysctl is denied), and a
// process outside the run cannot be signalled.
func TestEscapeProcessAccess(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Fork()), cage.WithHome(tempHome(t)))
	mustWorkOutside(t, "/bin/ps", "-p", strconv.Itoa(os.Getpid()), "-o", "args=")
	if o, _, err := run(t, c, "/bin/ps", "-p", strconv.Itoa(os.Getpid()), "-o", "args="); err == nil {
		t.Errorf("ps listed the test process: %q", o)
	}
	// __sysctl is BSD syscall 202, {CTL_KERN 1, KERN_PROCARGS2 49, pid}
	// [confirmed: xnu bsd/kern/syscalls.master, bsd/sys/sysctl.h].
	procargs := fmt.Sprintf(
		`syscall(202, pack("i3", 1, 49, %d), 3, $b = "\0" x 4096, pack("Q", 4096), 0, 0) == 0 or die "$!\n"; print $b`, os.Getpid())
	mustWorkOutside(t, "/usr/bin/perl", "-e", procargs)
	o, e, err := run(t, c, "/usr/bin/perl", "-e", procargs)
	mustRefuse(t, "sysctl kern.procargs2 of the test process", o, e, err)
	mustWorkOutside(t, "/bin/sh", "-c", "kill -0 "+strconv.Itoa(os.Getpid()))
	o, e, err = run(t, c, "/bin/sh", "-c", "kill -0 "+strconv.Itoa(os.Getpid()))
	mustRefuse(t, "signalling a process outside the run", o, e, err)

	// Every process, by {CTL_KERN 1, KERN_PROC 14, KERN_PROC_ALL 0}
	// [confirmed: xnu bsd/sys/sysctl.h], even with sysctl-read allowed.
	c = newCage(t, policy(t, profile.Seatbelt(`(allow sysctl-read)`)), cage.WithHome(tempHome(t)))
	procAll := `syscall(202, pack("i3", 1, 14, 0), 3, $b = "\0" x 8388608, $l = pack("Q", 8388608), 0, 0) == 0 or die "$!\n"; print "listed\n"`
	mustWorkOutside(t, "/usr/bin/perl", "-e", procAll)
	o, e, err = run(t, c, "/usr/bin/perl", "-e", procAll)
	mustRefuse(t, "sysctl kern.proc.all", o, e, err)
	// launchd's process group, by {CTL_KERN 1, KERN_PROC 14, KERN_PROC_PGRP 2, 1}
	// [confirmed: xnu bsd/sys/sysctl.h]: walking group ids lists every process.
	procPgrp := `syscall(202, pack("i4", 1, 14, 2, 1), 4, $b = "\0" x 65536, $l = pack("Q", 65536), 0, 0) == 0 or die "$!\n"; print "listed\n"`
	mustWorkOutside(t, "/usr/bin/perl", "-e", procPgrp)
	o, e, err = run(t, c, "/usr/bin/perl", "-e", procPgrp)
	mustRefuse(t, "sysctl kern.proc.pgrp", o, e, err)
}

// TestEscapeServiceManager: the user's service manager is unreachable.
func TestEscapeServiceManager(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	// The GUI domain may not exist on a headless runner: use a domain the
	// control run reaches.
	uid := strconv.Itoa(os.Getuid())
	argv := firstWorkingOutside(t, []string{"/bin/launchctl", "print", "gui/" + uid}, []string{"/bin/launchctl", "print", "user/" + uid})
	if o, _, err := run(t, c, argv[0], argv[1:]...); err == nil {
		t.Errorf("launchctl reached the service manager: %.200q", o)
	}
}

// TestEscapeUnixSocket: a Unix socket the policy does not allow cannot be
// reached.
func TestEscapeUnixSocket(t *testing.T) {
	requireCage(t)
	dir := tempHome(t)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := newCage(t, policy(t, profile.Read(dir)), cage.WithHome(tempHome(t)))
	connect := fmt.Sprintf(`IO::Socket::UNIX->new(Peer => "%s") or die "$!\n"`, sock)
	mustWorkOutside(t, "/usr/bin/perl", "-MIO::Socket::UNIX", "-e", connect)
	o, e, err := run(t, c, "/usr/bin/perl", "-MIO::Socket::UNIX", "-e", connect)
	mustRefuse(t, "connecting to an unlisted Unix socket", o, e, err)
}

// TestEscapeTmpSpelling: writes outside the allowed tree are refused
// whichever spelling of /tmp reaches them.
func TestEscapeTmpSpelling(t *testing.T) {
	requireCage(t)
	base := "/tmp/procage-escape-" + strconv.Itoa(os.Getpid())
	allowed, denied := base+"-allowed", base+"-denied"
	for _, d := range []string{allowed, denied} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(d)
	}
	c := newCage(t, policy(t, profile.ReadWrite(allowed)), cage.WithHome(tempHome(t)))
	if o, e, err := run(t, c, "/bin/sh", "-c", "echo ok > "+allowed+"/f"); err != nil {
		t.Fatalf("writing the allowed tree through /tmp: %v (%s%s)", err, o, e)
	}
	name := filepath.Base(denied)
	for _, p := range []string{
		denied + "/f", "/private" + denied + "/f", "//tmp/" + name + "/f", "/tmp/./" + name + "/f",
		"/tmp/../tmp/" + name + "/f", "/private/var/../tmp/" + name + "/f", "/TMP/" + name + "/f",
		"/System/Volumes/Data/private/tmp/" + name + "/f",
	} {
		o, e, err := run(t, c, "/bin/sh", "-c", "echo x > "+p)
		mustRefuse(t, "writing "+p, o, e, err)
	}
}

// TestEscapeCaseVariant: a Seatbelt-layer deny covers the name's case
// variants on a case-insensitive volume.
func TestEscapeCaseVariant(t *testing.T) {
	requireCage(t)
	dir := tempHome(t)
	writeFile(t, filepath.Join(dir, "Secret.txt"), "s")
	c := newCage(t, policy(t, profile.Read(dir),
		profile.Seatbelt(fmt.Sprintf(`(deny file-read* (literal %q))`, filepath.Join(dir, "Secret.txt")))),
		cage.WithHome(tempHome(t)))
	for _, n := range []string{"Secret.txt", "secret.txt", "SECRET.TXT"} {
		o, e, err := run(t, c, "/bin/cat", filepath.Join(dir, n))
		mustRefuse(t, "reading "+n, o, e, err)
	}
}

// TestEscapeTrustHandoffShell: with the whole home writable, shell
// startup files, git's user config and launch agents are not.
func TestEscapeTrustHandoffShell(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	c := newCage(t, policy(t, profile.ReadWrite(home)), cage.WithHome(home))
	if o, e, err := run(t, c, "/bin/sh", "-c", "echo ok > "+filepath.Join(home, "notes.txt")); err != nil {
		t.Fatalf("writing an ordinary file in the writable home: %v (%s%s)", err, o, e)
	}
	for _, name := range []string{".zshrc", ".bash_profile", ".profile", ".gitconfig", "Library/LaunchAgents/evil.plist",
		".zshrc.zwc", ".zcompdump", ".zsh_sessions/x.session", ".gitconfig.local"} {
		p := filepath.Join(home, name)
		o, e, err := run(t, c, "/bin/sh", "-c", "mkdir -p "+filepath.Dir(p)+" 2>/dev/null; echo evil >> "+p)
		mustRefuse(t, "writing "+name, o, e, err)
	}
	// A missing ~/.config built elsewhere and renamed into place.
	o, e, err := run(t, c, "/bin/sh", "-c", "mkdir -p "+filepath.Join(home, "cfg/git")+" && echo evil > "+
		filepath.Join(home, "cfg/git/config")+" && mv "+filepath.Join(home, "cfg")+" "+filepath.Join(home, ".config"))
	mustRefuse(t, "renaming a directory to a missing ~/.config", o, e, err)
}

// TestEscapeSetuidExec: a setuid program cannot be run from a cage,
// whatever the profile allows (the kernel's forbidden-exec-sugid).
func TestEscapeSetuidExec(t *testing.T) {
	requireCage(t)
	st, err := os.Stat("/bin/ps")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSetuid == 0 {
		t.Fatalf("/bin/ps is not setuid on this release (%v); pick another setuid program for this canary", st.Mode())
	}
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	mustWorkOutside(t, "/bin/sh", "-c", "/bin/ps -p $$")
	o, e, err := run(t, c, "/bin/sh", "-c", "/bin/ps -p $$")
	mustRefuse(t, "running the setuid /bin/ps", o, e, err)
}

// TestEscapeSpecificAllow: a Seatbelt-layer allow naming a specific
// operation does not beat the secrets class, which names it too.
func TestEscapeSpecificAllow(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "KEY")
	c := newCage(t, policy(t, profile.Read(home),
		profile.Seatbelt(fmt.Sprintf(`(allow file-read-data file-read-metadata (subpath %q))`, home))),
		cage.WithHome(home))
	o, e, err := run(t, c, "/bin/cat", filepath.Join(home, ".ssh", "id_ed25519"))
	mustRefuse(t, "reading a key under a specific allow", o, e, err)
}

// TestEscapeTIOCSTI: in the default new session, the child cannot
// push input into the terminal it was given (TIOCSTI needs the controlling
// terminal).
// openPTY opens a pseudo-terminal pair the test process does not take as
// its controlling terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	// TIOCPTYGRANT _IO('t', 84), TIOCPTYUNLK _IO('t', 82), TIOCPTYGNAME
	// _IOC(IOC_OUT, 't', 83, 128) [confirmed: xnu bsd/sys/ttycom.h].
	fd := int(master.Fd())
	if err := unix.IoctlSetInt(fd, 0x20007454, 0); err != nil {
		t.Fatalf("TIOCPTYGRANT: %v", err)
	}
	if err := unix.IoctlSetInt(fd, 0x20007452, 0); err != nil {
		t.Fatalf("TIOCPTYUNLK: %v", err)
	}
	name := make([]byte, 128)
	//lint:ignore SA1019 x/sys has no wrapper for TIOCPTYGNAME's 128-byte out buffer; a test-only direct call
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0x40807453, uintptr(unsafe.Pointer(&name[0]))); e != 0 {
		t.Fatalf("TIOCPTYGNAME: %v", e)
	}
	slave, err = os.OpenFile(string(name[:indexNUL(name)]), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

func TestEscapeTIOCSTI(t *testing.T) {
	requireCage(t)
	master, slave := openPTY(t)

	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	ctx := t.Context()
	cmd := c.Command(ctx, "/usr/bin/perl", "-e",
		// TIOCSTI is _IOW('t', 114, char) [confirmed: xnu bsd/sys/ttycom.h].
		`ioctl(STDIN, 0x80017472, "X") or die "TIOCSTI: $!\n"; print "injected\n"`)
	cmd.Stdin = slave
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil || strings.Contains(out.String(), "injected") {
		t.Fatalf("TIOCSTI succeeded from a cage (stdout %q, stderr %q)", out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "TIOCSTI:") {
		t.Fatalf("the child failed before trying TIOCSTI: %v %q", err, errb.String())
	}
	// Nothing may have reached the terminal's input queue.
	if err := master.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err == nil {
		buf := make([]byte, 16)
		if n, _ := master.Read(buf); n > 0 && strings.Contains(string(buf[:n]), "X") {
			t.Fatalf("injected input reached the terminal: %q", buf[:n])
		}
	}
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// TestEscapeContainerEngine: with the network on and the socket
// even listed by the policy, a container engine's socket stays
// unreachable: the service-manager class overrides the allow.
func TestEscapeContainerEngine(t *testing.T) {
	requireCage(t)
	// A short home: a Unix socket path must fit in 104 bytes.
	home, err := os.MkdirTemp("/private/tmp", "pc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	sock := filepath.Join(home, ".docker", "run", "docker.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := newCage(t, policy(t, profile.Network(profile.NetworkOn), profile.UnixSocket(sock)), cage.WithHome(home))
	connect := fmt.Sprintf(`IO::Socket::UNIX->new(Peer => "%s") or die "$!\n"`, sock)
	mustWorkOutside(t, "/usr/bin/perl", "-MIO::Socket::UNIX", "-e", connect)
	o, e, err := run(t, c, "/usr/bin/perl", "-MIO::Socket::UNIX", "-e", connect)
	mustRefuse(t, "connecting to Docker's socket", o, e, err)
}

// TestEscapeOtherTerminal: a child given one terminal can use it
// (stty's ioctls) but can neither read nor write another one, where a
// password typed into sudo or ssh would be.
func TestEscapeOtherTerminal(t *testing.T) {
	requireCage(t)
	_, own := openPTY(t)
	_, other := openPTY(t)
	// Also under a rule granting every pty (a regex, so no path of a
	// possibly case-sensitive devfs is resolved): the process-access class
	// decides.
	for _, c := range []*cage.Cage{
		newCage(t, policy(t), cage.WithHome(tempHome(t))),
		newCage(t, policy(t, profile.Seatbelt(`(allow file-read* file-write* file-ioctl (regex #"^/dev/ttys[0-9]+$"))`)), cage.WithHome(tempHome(t))),
	} {
		otherTerminal(t, c, own, other)
	}
}

func otherTerminal(t *testing.T, c *cage.Cage, own, other *os.File) {
	t.Helper()
	runOn := func(name string, args ...string) (string, string, error) {
		cmd := c.Command(t.Context(), name, args...)
		cmd.Stdin = own
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	if o, e, err := runOn("/bin/stty", "-g"); err != nil {
		t.Fatalf("stty on the child's own terminal: %v (%s%s)", err, o, e)
	}
	for _, mode := range []string{"<", ">"} {
		script := fmt.Sprintf(`open(my $f, "%s", "%s") or die "$!\n"; print "opened\n"`, mode, other.Name())
		mustWorkOutside(t, "/usr/bin/perl", "-e", script)
		o, e, err := runOn("/usr/bin/perl", "-e", script)
		mustRefuse(t, "opening another terminal with "+mode, o, e, err)
	}
}

// TestEscapePlantedLink: a link a caged child planted in a writable
// tree (build/cache -> the home directory) does not turn a later grant of
// the cache into a grant of the home directory.
func TestEscapePlantedLink(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "build"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t, profile.ReadWrite(proj)), cage.WithHome(home))
	cache := filepath.Join(proj, "build", "cache")
	if o, e, err := run(t, c, "/bin/ln", "-s", home, cache); err != nil {
		t.Fatalf("planting the link inside the writable tree: %v (%s%s)", err, o, e)
	}
	_, err := cage.New(policy(t, profile.ReadWrite(proj), profile.ReadWrite(cache)), cage.WithHome(home))
	var le *pathresolve.LinkError
	if !errors.Is(err, cage.ErrSuspectLink) || !errors.As(err, &le) || le.Link != cache {
		t.Fatalf("a later policy through the planted link: %v, want ErrSuspectLink naming %s", err, cache)
	}
	cmd := c.Command(t.Context(), "/bin/ls", cache+"/")
	cmd.Grants = []cage.Grant{{Path: cache, Write: true}}
	if err := cmd.Run(); !errors.As(err, &le) {
		t.Fatalf("a grant through the planted link: %v, want ErrSuspectLink", err)
	}
}

// TestEscapeLocalService: with the network on, a service listening
// on localhost (an inspector, Docker over TCP) is unreachable unless the
// policy names its port; loopback mode reaches only its named ports.
func TestEscapeLocalService(t *testing.T) {
	requireCage(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf(`IO::Socket::INET->new(PeerAddr => "127.0.0.1:%d") or die "$!\n"`, port)
	mustWorkOutside(t, "/usr/bin/perl", "-MIO::Socket::INET", "-e", connect)
	for _, tc := range []struct {
		name  string
		net   profile.Option
		allow bool
	}{
		{"on", profile.Network(profile.NetworkOn), false},
		{"on with the port", profile.Network(profile.NetworkOn, port), true},
		{"loopback, another port", profile.Network(profile.NetworkLoopback, port+1), false},
		{"loopback with the port", profile.Network(profile.NetworkLoopback, port), true},
	} {
		c := newCage(t, policy(t, tc.net), cage.WithHome(tempHome(t)))
		o, e, err := run(t, c, "/usr/bin/perl", "-MIO::Socket::INET", "-e", connect)
		if tc.allow {
			if err != nil {
				t.Errorf("%s: connecting to the named port: %v (%s%s)", tc.name, err, o, e)
			}
			continue
		}
		mustRefuse(t, tc.name+": connecting to a local service", o, e, err)
	}
}

// TestEscapeSystemServices: even with every Mach service and new
// pseudo-terminals allowed by accepted Seatbelt-layer rules, the
// service-manager class refuses a new pty. (The Mach names are checked by
// the simulator canaries: a runner's GUI services are not a given.)
func TestEscapeSystemServices(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.AcceptBroad(profile.BroadMachLookup),
		profile.Seatbelt(`(allow mach-lookup)
(allow pseudo-tty)
(allow file-read* file-write-data file-ioctl (literal "/dev/ptmx"))`)), cage.WithHome(tempHome(t)))
	mustWorkOutside(t, "/usr/bin/script", "-q", "/dev/null", "/usr/bin/true")
	o, e, err := run(t, c, "/usr/bin/script", "-q", "/dev/null", "/usr/bin/true")
	mustRefuse(t, "opening a new pseudo-terminal", o, e, err)
}
