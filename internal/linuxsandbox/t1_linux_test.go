package linuxsandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile/linux"
)

// t1Fixture is a writable tree holding a git directory, a home with
// secrets, and a file outside every writable tree.
type t1Fixture struct {
	w, home, outside string
}

func newT1Fixture(t *testing.T) t1Fixture {
	t.Helper()
	testenv.RequireUserNamespace(t)
	base := t.TempDir()
	f := t1Fixture{w: filepath.Join(base, "w"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{f.w + "/sub/.git/hooks", f.w + "/sub/.git/objects", f.w + "/sub/.git/info", f.home + "/.ssh"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		f.w + "/sub/.git/config": "[core]\n", f.w + "/sub/.git/HEAD": "ref: refs/heads/main\n",
		f.w + "/sub/.git/info/attributes": "", f.home + "/.ssh/id_ed25519": "SECRET\n",
		f.home + "/.netrc": "machine x password SECRET\n", f.outside: "outside\n",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f t1Fixture) namespace(t *testing.T) *Namespace {
	dirs, _ := FindGitDirs(f.w)
	return &Namespace{UserNS: os.Geteuid() != 0, UID: os.Geteuid(), GID: os.Getegid(), Dir: f.w,
		Mounts: []linux.Mount{
			{Kind: linux.MountReadOnly, Path: "/"},
			{Kind: linux.MountWritable, Path: f.w},
			{Kind: linux.MountHide, Path: f.home + "/.ssh"},
			{Kind: linux.MountHide, Path: f.home + "/.netrc"},
			{Kind: linux.MountHide, Path: f.home + "/.aws"}, // absent: nothing to cover
		},
		GitDirs: dirs}
}

// runT1 runs sh -c script under the namespace calls only (no Landlock, no
// seccomp: the mounts alone are under test) and returns its output.
func runT1(t *testing.T, ns *Namespace, script string) string {
	t.Helper()
	calls, err := NamespaceCalls(ns)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	pid, err := forkexec.Start(&forkexec.Attr{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: ns.Dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{null.Fd(), w.Fd(), w.Fd()}, Calls: calls.Calls})
	calls.KeepAlive()
	w.Close()
	if err != nil {
		if se, ok := err.(*forkexec.StepError); ok {
			t.Fatalf("%v (%s)", err, calls.Name(se.Step, se.Call))
		}
		t.Fatal(err)
	}
	out, _ := readAll(r)
	forkexec.Wait(pid)
	return out
}

func readAll(f *os.File) (string, error) {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String(), nil
		}
	}
}

// TestT1Mounts: inside the namespace the writable tree is writable, its
// git payload read-only and its .git unrenamable, everything else
// read-only (chmod too), and the secrets empty; outside, nothing changed.
func TestT1Mounts(t *testing.T) {
	f := newT1Fixture(t)
	script := `
try() { if out=$(eval "$2" 2>&1); then echo "$1: ok"; else echo "$1: FAIL $out"; fi; }
try write-tree 'echo x > new.txt'
try chmod-tree 'chmod +x new.txt'
try objects 'echo x > sub/.git/objects/o'
try head 'echo "ref: refs/heads/x" > sub/.git/HEAD'
try hook 'echo evil > sub/.git/hooks/pre-commit'
try config 'echo evil >> sub/.git/config'
try attributes 'echo evil >> sub/.git/info/attributes'
try rename-git 'mv sub/.git sub/g2'
try rename-sub 'mv sub sub2'
try commondir 'echo ../evil > sub/.git/commondir'
try outside-write 'echo x >> ` + f.outside + `'
try outside-chmod 'chmod 600 ` + f.outside + `'
try outside-touch 'touch ` + f.outside + `'
try ssh-list 'test -z "$(ls -A ` + f.home + `/.ssh)"'
try netrc-empty 'test ! -s ` + f.home + `/.netrc'
try ssh-write 'echo x > ` + f.home + `/.ssh/k'
`
	out := runT1(t, f.namespace(t), script)
	want := map[string]string{
		"write-tree": "ok", "chmod-tree": "ok", "objects": "ok", "head": "ok",
		"hook": "FAIL", "config": "FAIL", "attributes": "FAIL", "rename-git": "FAIL", "rename-sub": "FAIL",
		// A new name in the git directory: no mount can cover what does
		// not exist yet (the trust-handoff gap's remaining part).
		"commondir":     "ok",
		"outside-write": "FAIL", "outside-chmod": "FAIL", "outside-touch": "FAIL",
		"ssh-list": "ok", "netrc-empty": "ok", "ssh-write": "FAIL",
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	for k, w := range want {
		if !strings.HasPrefix(got[k], w) {
			t.Errorf("%s: got %q, want %s", k, got[k], w)
		}
	}
	for _, k := range []string{"hook", "config", "attributes", "outside-write", "outside-chmod", "ssh-write"} {
		if !strings.Contains(got[k], "Read-only file system") {
			t.Errorf("%s: %q, want EROFS", k, got[k])
		}
	}
	for _, k := range []string{"rename-git", "rename-sub"} {
		if !strings.Contains(got[k], "busy") {
			t.Errorf("%s: %q, want EBUSY", k, got[k])
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
	// The host's view is unchanged: the secret is there, the hook not.
	if b, _ := os.ReadFile(f.home + "/.ssh/id_ed25519"); string(b) != "SECRET\n" {
		t.Errorf("host's secret = %q", b)
	}
	if _, err := os.Stat(f.w + "/sub/.git/hooks/pre-commit"); err == nil {
		t.Error("the hook was written on the host")
	}
	if _, err := os.Stat(f.w + "/new.txt"); err != nil {
		t.Errorf("the writable tree's file is not on the host: %v", err)
	}
}

// wantStale starts /bin/true with calls and wants the spawn to fail at
// StepNamespace with ESTALE (an identity check that found another file);
// it returns that step's error.
func wantStale(t *testing.T, calls *Calls) *forkexec.StepError {
	t.Helper()
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	_, err := forkexec.Start(&forkexec.Attr{Path: "/bin/true", Args: []string{"true"}, Files: []uintptr{null.Fd(), null.Fd(), null.Fd()}, Calls: calls.Calls})
	calls.KeepAlive()
	se, ok := err.(*forkexec.StepError)
	if !ok || se.Step != forkexec.StepNamespace || se.Err != unix.ESTALE {
		t.Fatalf("Start = %v, want a namespace step failing with ESTALE", err)
	}
	return se
}

// TestT1Swap: a writable tree renamed away and replaced after the parent
// recorded it fails the spawn with ESTALE; nothing runs.
func TestT1Swap(t *testing.T) {
	f := newT1Fixture(t)
	ns := f.namespace(t)
	ns.Dir = ""
	calls, err := NamespaceCalls(ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.w, f.w+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.w, 0o755); err != nil {
		t.Fatal(err)
	}
	se := wantStale(t, calls)
	if n := calls.Name(se.Step, se.Call); !strings.HasPrefix(n, "fstat "+f.w) {
		t.Errorf("failing call %q, want the fstat of %s", n, f.w)
	}
}

// TestT1Reopen: a Reopen replaces the descriptor with one opened through
// the namespace's read-only view (a mode change through it is EROFS,
// where the handed one's reached the host's mount), and a device that is
// not the one handed over (another st_rdev) fails the spawn with ESTALE,
// naming the call.
func TestT1Reopen(t *testing.T) {
	f := newT1Fixture(t)
	var st unix.Stat_t
	if err := unix.Stat(os.DevNull, &st); err != nil {
		t.Fatal(err)
	}
	ns := f.namespace(t)
	ns.Reopen = []Reopen{{FD: 0, Path: os.DevNull, Flags: unix.O_RDONLY, Dev: st.Dev, Rdev: st.Rdev}}
	// fchmod to the mode it has: nothing changes if it works.
	out := runT1(t, ns, fmt.Sprintf(`/usr/bin/python3 -c "import os; os.fchmod(0, 0o%o)" 2>&1 | tail -1; readlink /proc/self/fd/0`, st.Mode&0o7777))
	if !strings.Contains(out, "Read-only file system") || !strings.Contains(out, "/dev/null") {
		t.Errorf("fchmod of the reopened /dev/null: %q, want EROFS", out)
	}

	ns = f.namespace(t)
	ns.Reopen = []Reopen{{FD: 0, Path: os.DevNull, Flags: unix.O_RDONLY, Dev: st.Dev, Rdev: st.Rdev + 1}}
	calls, err := NamespaceCalls(ns)
	if err != nil {
		t.Fatal(err)
	}
	se := wantStale(t, calls)
	if n := calls.Name(se.Step, se.Call); n != "reopen fd 0: /dev/null: fstat (must be the device handed over)" {
		t.Errorf("failing call %q", n)
	}
}

// TestT1KeepUnclean: a kept directory's parents are made by relative name
// from the private tmpfs's root, so a spelling with ".." (which would
// climb out of it onto the host's file system) is refused before any
// child runs.
func TestT1KeepUnclean(t *testing.T) {
	f := newT1Fixture(t)
	for _, k := range []string{"/tmp/a/../../etc/x", "/tmp/a//b", "tmp/a"} {
		ns := f.namespace(t)
		ns.Mounts = append(ns.Mounts, linux.Mount{Kind: linux.MountTmpfs, Path: "/tmp"})
		ns.Keep = []string{k}
		if _, err := NamespaceCalls(ns); err == nil || !strings.Contains(err.Error(), "not a clean absolute path") {
			t.Errorf("Keep %q: %v, want a refusal", k, err)
		}
	}
}
