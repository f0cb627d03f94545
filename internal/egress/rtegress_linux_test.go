package egress

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/egress/hostrule"
	"github.com/procage-go/procage/internal/testenv"
)

// TestRTEgressLocalRoute: the proxy refuses this machine's interface
// addresses, but Linux delivers locally every destination its local
// routing table covers, not just those: an address with a prefix on lo
// (`ip addr add 10.5.0.1/16 dev lo` makes all of 10.5.0.0/16 local, as
// 127.0.0.1/8 does 127.0.0.0/8; fib_add_ifaddr adds the prefix as
// RTN_LOCAL for a loopback device) and an AnyIP route (`ip route add local
// 11.0.0.0/24 dev lo`, used to serve a whole prefix from one host). A
// service bound on 0.0.0.0 or [::] answers on each such address: with
// --allow-address 10.0.0.0/8 (a network's rule), 10.5.9.9 reaches it; a
// name resolving to 11.0.0.9, a public address no rule is needed for,
// does too. Run in a new user and network namespace, where the test adds
// both; skipped where user namespaces cannot be made.
func TestRTEgressLocalRoute(t *testing.T) {
	if os.Getenv("PROCAGE_RTE_NETNS") == "1" {
		testLocalRouteInNS(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRTEgressLocalRoute$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "PROCAGE_RTE_NETNS=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 unix.CLONE_NEWUSER | unix.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Skipf("cannot start a child in a new user and network namespace: %v", err)
	}
	t.Logf("in a new network namespace:\n%s", out)
	if err != nil {
		t.Errorf("in a new network namespace: %v", err)
	}
}

func testLocalRouteInNS(t *testing.T) {
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(unix.IFF_UP)
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
	unix.Close(s)
	if err != nil {
		t.Fatalf("bring lo up: %v", err)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	nlAddAddr(t, lo.Index, netip.MustParsePrefix("10.5.0.1/16"))
	nlAddLocalRoute(t, lo.Index, netip.MustParsePrefix("11.0.0.0/24"))
	nlAddLocalRoute(t, lo.Index, netip.MustParsePrefix("2001:4860:5::/64"))

	port, accepted := testenv.HostService(t, "host service")

	names := map[string][]netip.Addr{
		"anyip.rt.test":    {netip.MustParseAddr("11.0.0.9")},
		"anyip6.rt.test":   {netip.MustParseAddr("2001:4860:5::9")},
		"loprefix.rt.test": {netip.MustParseAddr("10.5.9.9")},
	}
	rules, err := hostrule.NewRules([]string{"*.rt.test"}, nil, []string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Config{Rules: rules, Resolver: newResolver(names)}, nil) // the proxy's own dialer and host addresses
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	f := &fixture{p: p}
	for _, host := range []string{"anyip.rt.test", "anyip6.rt.test", "loprefix.rt.test", "10.5.9.9"} {
		hp := hostPort(host, port)
		tunnelled := "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
		for proto, text := range map[string]string{
			"http":    "GET http://" + hp + "/ HTTP/1.1\r\nHost: " + hp + "\r\nConnection: close\r\n\r\n",
			"connect": "CONNECT " + hp + " HTTP/1.1\r\nHost: " + hp + "\r\n\r\n" + tunnelled,
			"socks5":  socksText(host, port) + tunnelled,
		} {
			if out := rawRequest(t, f, text); strings.Contains(out, "host service") {
				t.Errorf("%s %s: reached the host's service on 0.0.0.0 through a local route", proto, hp)
			}
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host's listener accepted %d connections from the proxy", n)
	}
	// An address added now, within the interface cache's 100ms: the
	// route check is not cached.
	nlAddAddr(t, lo.Index, netip.MustParsePrefix("10.7.0.1/32"))
	hp := hostPort("10.7.0.1", port)
	if out := rawRequest(t, f, "CONNECT "+hp+" HTTP/1.1\r\nHost: "+hp+"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); strings.Contains(out, "host service") {
		t.Errorf("CONNECT %s, an address just added: reached the host's service", hp)
	}
	_ = p.Stop()
	for _, r := range p.Records() {
		if r.Verdict != hostrule.DeniedAddress {
			t.Errorf("record: %v; want %s", r, hostrule.DeniedAddress)
		}
	}
}

// nlRequest sends one netlink route request and checks its
// acknowledgement.
func nlRequest(t *testing.T, typ uint16, body []byte) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	msg = append(msg, body...)
	h := (*unix.NlMsghdr)(unsafe.Pointer(&msg[0]))
	*h = unix.NlMsghdr{Len: uint32(len(msg)), Type: typ, Flags: unix.NLM_F_REQUEST | unix.NLM_F_ACK | unix.NLM_F_CREATE | unix.NLM_F_EXCL, Seq: 1}
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 || msgs[0].Header.Type != unix.NLMSG_ERROR {
		t.Fatalf("netlink answer: %v %v", msgs, err)
	}
	if e := int32(binary.NativeEndian.Uint32(msgs[0].Data)); e != 0 {
		t.Fatalf("netlink request %d: %v", typ, syscall.Errno(-e))
	}
}

func nlAttr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.NativeEndian.PutUint16(b, uint16(4+len(data)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func family(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// nlAddAddr is `ip addr add PREFIX dev INDEX`.
func nlAddAddr(t *testing.T, index int, p netip.Prefix) {
	ifa := unix.IfAddrmsg{Family: family(p.Addr()), Prefixlen: uint8(p.Bits()), Index: uint32(index)}
	b := (*[unix.SizeofIfAddrmsg]byte)(unsafe.Pointer(&ifa))[:]
	b = append(b[:len(b):len(b)], nlAttr(unix.IFA_LOCAL, p.Addr().AsSlice())...)
	b = append(b, nlAttr(unix.IFA_ADDRESS, p.Addr().AsSlice())...)
	nlRequest(t, unix.RTM_NEWADDR, b)
}

// nlAddLocalRoute is `ip route add local PREFIX dev INDEX`.
func nlAddLocalRoute(t *testing.T, index int, p netip.Prefix) {
	rt := unix.RtMsg{Family: family(p.Addr()), Dst_len: uint8(p.Bits()), Table: unix.RT_TABLE_LOCAL,
		Protocol: unix.RTPROT_BOOT, Scope: unix.RT_SCOPE_HOST, Type: unix.RTN_LOCAL}
	b := (*[unix.SizeofRtMsg]byte)(unsafe.Pointer(&rt))[:]
	b = append(b[:len(b):len(b)], nlAttr(unix.RTA_DST, p.Addr().AsSlice())...)
	oif := make([]byte, 4)
	binary.NativeEndian.PutUint32(oif, uint32(index))
	b = append(b, nlAttr(unix.RTA_OIF, oif)...)
	nlRequest(t, unix.RTM_NEWROUTE, b)
}
