package tests

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// The run's own network namespace at tier T1 (network_namespaces(7)),
// each case first at T2, where the gaps it closes are open: a named host
// port is reached through the caller's forwarder, another host address on
// that port, an unnamed host port and a host abstract Unix socket (unix(7):
// the abstract namespace is per network namespace) are not, and the run's
// own loopback server works.

// netnsProbe connects to each target and prints "NAME: ok REPLY" or
// "NAME: err ERRNO"; then it listens and connects on its own 127.0.0.1.
const netnsProbe = `
import errno, socket, sys
def conn(fam, addr):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(addr)
        s.sendall(b"ping\n")
        d = s.makefile().readline().strip()
        s.close()
        return "ok " + d
    except OSError as e:
        return "err " + (errno.errorcode.get(e.errno, "?") if e.errno else type(e).__name__)
named, unnamed, abstract = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
print("named:", conn(socket.AF_INET, ("127.0.0.1", named)))
print("otherhost:", conn(socket.AF_INET, ("127.0.0.2", named)))
print("unnamed:", conn(socket.AF_INET, ("127.0.0.1", unnamed)))
print("abstract:", conn(socket.AF_UNIX, "\0" + abstract))
try:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname(), timeout=5)
    a, _ = srv.accept()
    a.sendall(b"own\n")
    print("own:", "ok " + c.makefile().readline().strip())
except OSError as e:
    print("own:", "err " + errno.errorcode.get(e.errno, "?"))
`

// hostServer answers each connection's first line with "NAME LINE".
func hostServer(t *testing.T, network, addr, name string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "%s %s", name, line)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln
}

func TestT1NetworkNamespace(t *testing.T) {
	const python = "/usr/bin/python3"
	testenv.RequireProgram(t, python)
	named := hostServer(t, "tcp", "127.0.0.1:0", "host-named")
	port := named.Addr().(*net.TCPAddr).Port
	hostServer(t, "tcp", fmt.Sprintf("127.0.0.2:%d", port), "host-other")
	unnamed := hostServer(t, "tcp", "127.0.0.1:0", "host-unnamed").Addr().(*net.TCPAddr).Port
	abstract := fmt.Sprintf("procage-netns-%d-%d", os.Getpid(), time.Now().UnixNano())
	hostServer(t, "unix", "@"+abstract, "host-abstract")
	sock := filepath.Join(tempHome(t), "s")

	type want map[string]string
	for _, c := range []struct {
		name string
		tier cage.LinuxTier
		mode profile.NetworkMode
		want want
	}{
		// The canaries: Landlock's port rules let another host on the
		// named port through (the loopback gap), and without
		// process-access's scope a host abstract socket is reachable.
		{"T2 loopback", cage.TierT2, profile.NetworkLoopback, want{"named": "ok host-named ping", "otherhost": "ok host-other ping", "abstract": "ok host-abstract ping"}},
		{"T2 off", cage.TierT2, profile.NetworkOff, want{"named": "err EPERM", "abstract": "ok host-abstract ping"}},
		{"T1 loopback", cage.TierT1, profile.NetworkLoopback, want{"named": "ok host-named ping", "otherhost": "err ECONNREFUSED",
			"unnamed": "err ECONNREFUSED", "abstract": "err ECONNREFUSED", "own": "ok own"}},
		// Off: seccomp refuses IP sockets as before; the namespace still
		// hides the host's abstract sockets.
		{"T1 off", cage.TierT1, profile.NetworkOff, want{"named": "err EPERM", "otherhost": "err EPERM", "unnamed": "err EPERM",
			"abstract": "err ECONNREFUSED", "own": "err EPERM"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.tier == cage.TierT1 {
				requireT1(t)
			}
			var ports []int
			if c.mode == profile.NetworkLoopback {
				ports = []int{port}
			}
			pol := policy(t, profile.Network(c.mode, ports...), profile.UnixSocket(sock), profile.Waive(profile.ProcessAccess))
			cg, err := cage.New(pol, cage.WithLinuxTier(c.tier), cage.WithHome(tempHome(t)),
				cage.AcceptGaps(profile.GapLoopback, profile.GapUnixSocketPath))
			if err != nil {
				skipIfTooOld(t, err)
				t.Fatal(err)
			}
			if c.tier == cage.TierT1 && !strings.Contains(cg.Plan(), "\nnetwork namespace: own") {
				t.Errorf("plan does not list the run's network namespace:\n%s", cg.Plan())
			}
			before := runtime.NumGoroutine()
			out, errOut, err := run(t, cg, python, "-c", netnsProbe, fmt.Sprint(port), fmt.Sprint(unnamed), abstract)
			if err != nil {
				t.Fatalf("run: %v\n%s%s", err, out, errOut)
			}
			t.Logf("%s:\n%s", c.name, out)
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				k, v, _ := strings.Cut(line, ": ")
				got[k] = v
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
			// Wait ended the run's forwarders: no goroutine of theirs is left.
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("%d goroutines after the run, %d before", n, before)
			}
		})
	}
}
