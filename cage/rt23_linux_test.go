package cage_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// Red-team canaries for issue 23: a proxy-mode run on Linux, at T2 (the
// gap network-proxy-direct accepted) and at T1 (the run's own network
// namespace, the proxy served on the child's handed-over listener).

// rt23Tiers runs fn at T2 and, where the host can, at T1.
func rt23Tiers(t *testing.T, fn func(t *testing.T, tier cage.LinuxTier)) {
	t.Run("T2", func(t *testing.T) { fn(t, cage.TierT2) })
	t.Run("T1", func(t *testing.T) {
		requireT1(t)
		fn(t, cage.TierT1)
	})
}

// rt23Cage is a proxy-mode cage allowing allowed.test, and an upstream on
// 127.0.0.2 that answers "upstream PATH".
func rt23Cage(t *testing.T, tier cage.LinuxTier) (*cage.Cage, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream %s", r.URL.Path)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	p, err := profile.New(profile.BaseV1, profile.AllowHosts("allowed.test"), profile.Fork())
	if err != nil {
		t.Fatal(err)
	}
	opts := []cage.Option{cage.WithLinuxTier(tier), cage.WithProxyNet(testResolver{"allowed.test": {proxyPublic}}, testDialer{})}
	if tier == cage.TierT2 {
		opts = append(opts, cage.AcceptGaps(profile.GapProxyDirect))
	}
	c, err := cage.New(p, opts...)
	skipIfTooOld(t, err)
	if err != nil {
		t.Fatal(err)
	}
	return c, ln.Addr().(*net.TCPAddr).Port
}

// TestRT23ProxyForeignPeer: a run's proxy listens on 127.0.0.1 and serves
// whoever connects: any process of any user on the host (here: a curl
// outside the run, as nobody when the test is root) egresses with the
// run's allowlist, and its requests land in the run's record as the
// child's. Nothing (a per-run credential in the proxy URLs, a check of
// the peer) ties the proxy to its run, and the package docs do not say so.
func TestRT23ProxyForeignPeer(t *testing.T) { rt23Tiers(t, testRT23ProxyForeignPeer) }

func testRT23ProxyForeignPeer(t *testing.T, tier cage.LinuxTier) {
	const curl = "/usr/bin/curl"
	testenv.RequireProgram(t, curl)
	c, port := rt23Cage(t, tier)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := c.Command(ctx, "/bin/sh", "-c", `echo "$HTTP_PROXY"; exec /bin/sleep 60`)
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Kill(); _ = run.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	// The foreign process finds the port (ss, /proc/net/tcp) but not the
	// run's credential, which only the run's environment holds.
	u, err := url.Parse(strings.TrimSpace(line))
	if err != nil || u.User == nil {
		t.Fatalf("the run's HTTP_PROXY %q has no credential (%v)", line, err)
	}
	u.User = nil
	proxyURL := u.String()
	foreign := exec.CommandContext(ctx, curl, "-sS", "--max-time", "10", "-w", "|%{http_code}", "--proxy", proxyURL, fmt.Sprintf("http://allowed.test:%d/foreign", port))
	who := "this process's user"
	if os.Geteuid() == 0 {
		foreign.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		who = "nobody"
	}
	out, err := foreign.CombinedOutput() // at T1 127.0.0.1:PORT is the host's, not the run's: nothing or another service
	t.Logf("curl as %s, outside the run, through %s: %v %q", who, proxyURL, err, out)
	if bytes.Contains(out, []byte("upstream /foreign")) {
		t.Errorf("a process outside the run (as %s) reached allowed.test through the run's proxy", who)
	}
	// At T2 the proxy is on the host's 127.0.0.1 and answers 407; at T1
	// 127.0.0.1:PORT is the host's, not the run's (nothing listens).
	if tier == cage.TierT2 && !bytes.HasSuffix(out, []byte("|407")) {
		t.Errorf("curl without the credential: %q, want 407", out)
	}
	for _, r := range run.NetLog() {
		t.Logf("run's record: %v", r)
	}
}

// TestRT23ProxyModeListen: a proxy-mode child cannot bind TCP (Landlock
// handles bind, no port allowed), but listen() on an unbound socket
// autobinds an ephemeral port on every interface (landlock-lsm/linux#15):
// any host that reaches this machine connects in, around the proxy and its
// record. At T2 that is part of the gap network-proxy-direct, which must
// name it (shown open here); at T1 the socket listens in the run's own
// network namespace, which no peer outside the run reaches.
func TestRT23ProxyModeListen(t *testing.T) { rt23Tiers(t, testRT23ProxyModeListen) }

func testRT23ProxyModeListen(t *testing.T, tier cage.LinuxTier) {
	const py = "/usr/bin/python3"
	testenv.RequireProgram(t, py)
	c, _ := rt23Cage(t, tier)
	if plan := c.Plan(); tier == cage.TierT2 && !strings.Contains(plan, "listen() without bind() listens on an ephemeral port on every interface (landlock-lsm/linux#15)") {
		t.Errorf("the gap network-proxy-direct does not name listen() without bind():\n%s", plan)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := `import socket,sys
s = socket.socket()
try:
    s.listen(1)
except OSError as e:
    print("refused", e.errno, flush=True); sys.exit(0)
print(s.getsockname()[1], flush=True)
s.settimeout(20)
c, _ = s.accept()
c.sendall(b"secret from the cage")
c.close()
`
	run := c.Command(ctx, py, "-c", script)
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Kill(); _ = run.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v %s", err, stderr.String())
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "refused") {
		if tier == cage.TierT2 {
			t.Errorf("listen refused at T2 (%s): the gap's text says it listens; update the gap", line)
		}
		return
	}
	// 127.0.0.2 stands for any address of this machine: the socket
	// listens on 0.0.0.0 (at T1, of the run's own namespace).
	conn, err := net.DialTimeout("tcp", "127.0.0.2:"+line, 5*time.Second)
	if err != nil {
		if tier == cage.TierT2 {
			t.Errorf("connect to the child's port %s: %v; the gap's text says a peer connects in", line, err)
		}
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(conn)
	if tier == cage.TierT1 {
		t.Errorf("a T1 proxy-mode child listened on 0.0.0.0:%s and a peer outside the run read %q from it (record: %v)", line, got, run.NetLog())
		return
	}
	// T2: the accepted gap, shown open.
	if string(got) != "secret from the cage" {
		t.Errorf("T2: read %q from the child's port", got)
	}
	t.Logf("T2 (gap network-proxy-direct, accepted): a peer outside the run read %q from the child's port %s", got, line)
}

// TestRT23ProxyHostAddress: a proxy-mode run reaches a service this host
// binds on every address (0.0.0.0 or [::]) through the run's proxy, at
// one of the host's own interface addresses: the proxy refuses loopback
// and private destinations unless an address rule allows them, but a name
// resolving to the host's own address (any name a wildcard allows) and an
// address literal inside a network an address rule allows are neither.
// The proxy's refusal is what holds at both tiers: at T2 Landlock lets the
// child connect to the proxy's port only, at T1 the run's own network
// namespace has no way out but the proxy.
func TestRT23ProxyHostAddress(t *testing.T) { rt23Tiers(t, testRT23ProxyHostAddress) }

func testRT23ProxyHostAddress(t *testing.T, tier cage.LinuxTier) {
	const curl = "/usr/bin/curl"
	testenv.RequireProgram(t, curl)
	hosts := testenv.HostAddrs(t)
	port, accepted := testenv.HostService(t, "host service")

	names := testResolver{}
	var rules []string
	var script strings.Builder
	for i, h := range hosts {
		a := h.Addr()
		name := fmt.Sprintf("h%d.own.test", i)
		names[name] = []netip.Addr{a}
		// A rule for the address's network, not naming the address.
		bits := min(h.Bits(), 24)
		if a.Is6() {
			bits = min(h.Bits(), 64)
		}
		rules = append(rules, netip.PrefixFrom(a, bits).Masked().String())
		lit := netip.AddrPortFrom(a, uint16(port)).String()
		for _, args := range []string{
			fmt.Sprintf("http://%s:%d/", name, port),                                             // HTTP_PROXY
			fmt.Sprintf("-p http://%s:%d/", name, port),                                          // CONNECT
			fmt.Sprintf(`--proxy "socks5h://${ALL_PROXY#socks5h://}" http://%s:%d/`, name, port), // SOCKS5, the name
			fmt.Sprintf("-g http://%s/", lit),                                                    // an address literal
			fmt.Sprintf(`-g --proxy "socks5://${ALL_PROXY#socks5h://}" http://%s/`, lit),         // SOCKS5, the address
		} {
			fmt.Fprintf(&script, "echo '== %s'; %s -sS --max-time 10 %s; echo\n", args, curl, args)
		}
	}
	// Control, last: a rule naming the first address and another port
	// reaches a listener there.
	named := netip.AddrPortFrom(hosts[0].Addr(), uint16(testenv.ServeHTTP(t, ":0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "named service")
	}))))
	rules = append(rules, named.String())
	fmt.Fprintf(&script, "%s -sS -g --max-time 10 http://%s/\n", curl, named)
	p, err := profile.New(profile.BaseV1, profile.AllowHosts("*.own.test"), profile.AllowAddresses(rules...), profile.Fork())
	if err != nil {
		t.Fatal(err)
	}
	opts := []cage.Option{cage.WithLinuxTier(tier), cage.WithProxyNet(names, nil)} // the proxy's own dialer
	if tier == cage.TierT2 {
		opts = append(opts, cage.AcceptGaps(profile.GapProxyDirect))
	}
	c, err := cage.New(p, opts...)
	skipIfTooOld(t, err)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/sh", "-c", script.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Logf("caged curls (address rules %v):\n%s", rules, out.String())
	if strings.Contains(out.String(), "host service") {
		t.Errorf("the run reached the host's own service through its proxy")
	}
	if !strings.HasSuffix(out.String(), "named service") {
		t.Errorf("the run did not reach %s, which an address rule names", named)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host's listener accepted %d connections", n)
	}
	log := cmd.NetLog()
	if len(log) != 5*len(hosts)+1 || !log[len(log)-1].Allowed() {
		t.Fatalf("%d records, want %d, the last allowed: %v", len(log), 5*len(hosts)+1, log)
	}
	for _, r := range log[:len(log)-1] {
		if r.Verdict != cage.NetDeniedAddress || !strings.Contains(r.Reason, "this host") {
			t.Errorf("record: %v; want %s naming this host", r, cage.NetDeniedAddress)
		}
	}
}
