package tests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/procage-go/procage/cage"
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

// TestEscapeSecrets: with the whole home readable, a private key is not,
// nor in another case.
func TestEscapeSecrets(t *testing.T) {
	requireUnsandboxed(t)
	home := tempHome(t)
	writeFile(t, filepath.Join(home, ".ssh", "id_rsa"), "KEY")
	c := newCage(t, policy(t, profile.Read(home)), cage.WithHome(home))
	for _, p := range []string{filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, ".SSH", "ID_RSA")} {
		o, e, err := run(t, c, "/bin/cat", p)
		mustRefuse(t, "reading "+p, o, e, err)
	}
}

// TestEscapeTrustHandoff: inside a writable tree, a git hook cannot be
// written.
func TestEscapeTrustHandoff(t *testing.T) {
	requireUnsandboxed(t)
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

// TestEscapeProcessAccess: another process's arguments cannot be
// read (ps is setuid and refused; the argument sysctl is denied), and a
// process outside the run cannot be signalled.
func TestEscapeProcessAccess(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.Fork()), cage.WithHome(tempHome(t)))
	if o, _, err := run(t, c, "/bin/ps", "-p", strconv.Itoa(os.Getpid()), "-o", "args="); err == nil {
		t.Errorf("ps listed the test process: %q", o)
	}
	// __sysctl is BSD syscall 202, {CTL_KERN 1, KERN_PROCARGS2 49, pid}
	// [confirmed: xnu bsd/kern/syscalls.master, bsd/sys/sysctl.h].
	o, e, err := run(t, c, "/usr/bin/perl", "-e", fmt.Sprintf(
		`syscall(202, pack("i3", 1, 49, %d), 3, $b = "\0" x 4096, pack("Q", 4096), 0, 0) == 0 or die "$!\n"; print $b`, os.Getpid()))
	mustRefuse(t, "sysctl kern.procargs2 of the test process", o, e, err)
	o, e, err = run(t, c, "/bin/sh", "-c", "kill -0 "+strconv.Itoa(os.Getpid()))
	mustRefuse(t, "signalling a process outside the run", o, e, err)
}

// TestEscapeServiceManager: the user's service manager is unreachable.
func TestEscapeServiceManager(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	if o, _, err := run(t, c, "/bin/launchctl", "print", "gui/"+strconv.Itoa(os.Getuid())); err == nil {
		t.Errorf("launchctl reached the service manager: %.200q", o)
	}
}

// TestEscapeUnixSocket: a Unix socket the policy does not allow cannot be
// reached.
func TestEscapeUnixSocket(t *testing.T) {
	requireUnsandboxed(t)
	dir := tempHome(t)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := newCage(t, policy(t, profile.Read(dir)), cage.WithHome(tempHome(t)))
	o, e, err := run(t, c, "/usr/bin/perl", "-MIO::Socket::UNIX", "-e",
		fmt.Sprintf(`IO::Socket::UNIX->new(Peer => "%s") or die "$!\n"`, sock))
	mustRefuse(t, "connecting to an unlisted Unix socket", o, e, err)
}

// TestEscapeTmpSpelling: writes outside the allowed tree are refused
// whichever spelling of /tmp reaches them.
func TestEscapeTmpSpelling(t *testing.T) {
	requireUnsandboxed(t)
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
	requireUnsandboxed(t)
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
