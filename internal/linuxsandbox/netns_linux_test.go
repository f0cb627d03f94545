package linuxsandbox

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile/linux"
)

// TestNetNSHandoff: under the namespace calls alone (no Landlock, no
// seccomp), a child with its own network namespace and lo up hands over
// listeners on its 127.0.0.1, in order, that the parent accepts the
// run's connection on; without lo up (network off) a connect to
// 127.0.0.1 fails with ENETUNREACH.
func TestNetNSHandoff(t *testing.T) {
	testenv.RequireUserNamespace(t)
	ns := func(n *NetNS) *Namespace {
		return &Namespace{UserNS: os.Geteuid() != 0, UID: os.Geteuid(), GID: os.Getegid(), Net: n,
			Mounts: []linux.Mount{{Kind: linux.MountReadOnly, Path: "/"}}}
	}
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	files := []uintptr{null.Fd(), null.Fd(), null.Fd()}

	n, err := NewNetNS(true, []uint16{4242, 4343}, forkexec.KeptAbove(files))
	if err != nil {
		t.Fatal(err)
	}
	calls, err := NamespaceCalls(ns(n))
	if err != nil {
		t.Fatal(err)
	}
	// The target connects to its own 127.0.0.1:4242 (the handed-over
	// listener: the parent accepts it) and writes a line.
	script := `exec 3<>/dev/tcp/127.0.0.1/4242 && echo from-the-run >&3`
	pid, err := forkexec.Start(&forkexec.Attr{Path: "/bin/bash", Args: []string{"bash", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin"}, Files: files, Calls: calls.Calls})
	calls.KeepAlive()
	if err != nil {
		if se, ok := errors.AsType[*forkexec.StepError](err); ok {
			t.Fatalf("%v (%s)", err, calls.Name(se.Step, se.Call))
		}
		t.Fatal(err)
	}
	lns, err := n.Receive()
	if err != nil {
		forkexec.Wait(pid)
		t.Fatal(err)
	}
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	if len(lns) != 2 || lns[0].Addr().String() != "127.0.0.1:4242" || lns[1].Addr().String() != "127.0.0.1:4343" {
		t.Fatalf("listeners %v", lns)
	}
	c, err := lns[0].Accept()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	k, _ := c.Read(buf)
	c.Close()
	if ws, _ := forkexec.Wait(pid); ws.ExitStatus() != 0 || strings.TrimSpace(string(buf[:k])) != "from-the-run" {
		t.Errorf("exit %d, read %q", ws.ExitStatus(), buf[:k])
	}
	// The host's 127.0.0.1:4343 is not what the child listened on.
	if hc, err := net.Dial("tcp", "127.0.0.1:4343"); err == nil {
		hc.Close()
		t.Log("something on the host listens on 127.0.0.1:4343 (not the run's)")
	}

	// lo down (network off): every connect fails with ENETUNREACH.
	n, err = NewNetNS(false, nil, forkexec.KeptAbove(files))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	calls, err = NamespaceCalls(ns(n))
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pid, err = forkexec.Start(&forkexec.Attr{Path: "/bin/bash", Args: []string{"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/4242"},
		Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{null.Fd(), w.Fd(), w.Fd()}, Calls: calls.Calls})
	calls.KeepAlive()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := readAll(r)
	ws, _ := forkexec.Wait(pid)
	if ws.ExitStatus() == 0 || !strings.Contains(out, "Network is unreachable") {
		t.Errorf("lo down: exit %d, %q; want ENETUNREACH", ws.ExitStatus(), out)
	}
}
