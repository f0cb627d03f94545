package linuxsandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A T1 run's own network namespace (network_namespaces(7)): the child
// adds CLONE_NEWNET to its unshare, brings lo up if asked (ioctl
// SIOCSIFFLAGS on a datagram socket: netdevice(7)), and creates each
// listener the caller serves on 127.0.0.1:PORT of its namespace
// (socket, bind, listen), moved onto a descriptor number the parent
// reserved before fork; then it sends them all to the parent with
// sendmsg(SCM_RIGHTS) over a socketpair made before fork (unix(7)). The
// listeners stay in the child's namespace: what connects to them comes from
// inside the run, and the parent dials out from its own. No bridge process
// and no helper binary (sandbox-runtime and Codex bridge with socat or a
// forked process instead).

// scmMaxFD is the kernel's limit on descriptors in one SCM_RIGHTS message
// (SCM_MAX_FD, include/net/scm.h).
const scmMaxFD = 253

// NetNS is what a T1 child does in its own network namespace.
type NetNS struct {
	// Loopback: bring lo up.
	Loopback bool
	// Ports are the 127.0.0.1 ports the child listens on and hands over,
	// in order ([NetHandoff.Receive] returns them so).
	Ports []uint16

	conn   int   // the child's end of the socketpair
	fds    []int // the reserved descriptor numbers, one per port
	oob    [][]byte
	ifreq  *unix.Ifreq
	addrs  []*unix.RawSockaddrInet4
	iov    []unix.Iovec
	msgs   []*unix.Msghdr
	byte1  []byte
	parent *os.File
}

// NewNetNS prepares a network namespace for one spawn: the socketpair
// and the reserved descriptors (at least kept, the lowest number the
// child's descriptor shuffle leaves alone: forkexec.KeptAbove). Close it
// once the fork is over (or use [NetNS.Receive], which closes what the
// child needed).
func NewNetNS(loopback bool, ports []uint16, kept int) (*NetNS, error) {
	n := &NetNS{Loopback: loopback, Ports: ports, conn: -1, byte1: []byte{0}}
	if loopback {
		ifr, err := unix.NewIfreq("lo")
		if err != nil {
			return nil, err
		}
		ifr.SetUint16(unix.IFF_UP)
		n.ifreq = ifr
	}
	if len(ports) == 0 {
		return n, nil
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("linuxsandbox: socketpair: %w", err)
	}
	n.parent = os.NewFile(uintptr(sp[0]), "procage netns handoff")
	n.conn, err = unix.FcntlInt(uintptr(sp[1]), unix.F_DUPFD_CLOEXEC, kept)
	unix.Close(sp[1])
	if err != nil {
		n.conn = -1
		n.Close()
		return nil, fmt.Errorf("linuxsandbox: reserving a descriptor: %w", err)
	}
	for range ports {
		// A placeholder the child replaces (dup3) with the listener: its
		// number is known here, so the SCM_RIGHTS message is written now.
		fd, err := unix.FcntlInt(uintptr(n.conn), unix.F_DUPFD_CLOEXEC, kept)
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("linuxsandbox: reserving a descriptor: %w", err)
		}
		n.fds = append(n.fds, fd)
		sa := &unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: [4]byte{127, 0, 0, 1}}
		n.addrs = append(n.addrs, sa)
	}
	for i, p := range ports {
		pb := (*[2]byte)(unsafe.Pointer(&n.addrs[i].Port))
		pb[0], pb[1] = byte(p>>8), byte(p) // network byte order
	}
	for i := 0; i < len(n.fds); i += scmMaxFD {
		oob := unix.UnixRights(n.fds[i:min(i+scmMaxFD, len(n.fds))]...)
		n.oob = append(n.oob, oob)
	}
	n.iov = make([]unix.Iovec, len(n.oob))
	for i, oob := range n.oob {
		n.iov[i].Base = &n.byte1[0]
		n.iov[i].SetLen(1)
		m := &unix.Msghdr{Iov: &n.iov[i], Control: &oob[0]}
		m.SetIovlen(1)
		m.SetControllen(len(oob))
		n.msgs = append(n.msgs, m)
	}
	return n, nil
}

// calls adds the child's network calls (after the unshare).
func (n *NetNS) calls(b *nsBuilder) {
	if n.Loopback {
		s := b.slot()
		b.keep = append(b.keep, n.ifreq)
		b.call("socket for lo", b.raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0).StoreResult(s))
		b.call("bring lo up (ioctl SIOCSIFFLAGS)", b.raw(unix.SYS_IOCTL, 0, unix.SIOCSIFFLAGS, uintptr(unsafe.Pointer(n.ifreq))).ArgFrom(0, s))
		b.close("the lo socket", s)
	}
	for i, p := range n.Ports {
		s := b.slot()
		fd := uintptr(n.fds[i])
		what := fmt.Sprintf("127.0.0.1:%d", p)
		b.call("socket for "+what, b.raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0).StoreResult(s))
		b.call("move the socket for "+what, b.raw(unix.SYS_DUP3, 0, fd, unix.O_CLOEXEC).ArgFrom(0, s))
		b.close("the socket for "+what, s)
		b.call("bind "+what, b.raw(unix.SYS_BIND, fd, uintptr(unsafe.Pointer(n.addrs[i])), unix.SizeofSockaddrInet4))
		b.call("listen on "+what, b.raw(unix.SYS_LISTEN, fd, unix.SOMAXCONN))
	}
	for _, m := range n.msgs {
		b.call("hand the listeners to the caller (sendmsg SCM_RIGHTS)", b.raw(unix.SYS_SENDMSG, uintptr(n.conn), uintptr(unsafe.Pointer(m)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL))
	}
	b.keep = append(b.keep, n)
}

// Receive returns the listeners the child handed over, one per port in
// order, once forkexec.Start has returned without error (the child ran
// every call before exec, so the messages are queued), and closes the
// socketpair and the reserved descriptors.
func (n *NetNS) Receive() ([]net.Listener, error) {
	defer n.Close()
	var lns []net.Listener
	fail := func(err error) ([]net.Listener, error) {
		for _, l := range lns {
			l.Close()
		}
		return nil, fmt.Errorf("linuxsandbox: receiving the run's listeners: %w", err)
	}
	if n.parent == nil {
		return nil, nil
	}
	buf := make([]byte, 1)
	for _, want := range n.oob {
		oob := make([]byte, len(want))
		_, oobn, flags, _, err := unix.Recvmsg(int(n.parent.Fd()), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
		if err != nil {
			return fail(err)
		}
		if flags&unix.MSG_CTRUNC != 0 {
			return fail(errors.New("control message truncated"))
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return fail(err)
		}
		var fds []int
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err != nil {
				return fail(err)
			}
			fds = append(fds, got...)
		}
		for _, fd := range fds {
			f := os.NewFile(uintptr(fd), "procage netns listener")
			l, err := net.FileListener(f)
			f.Close()
			if err != nil {
				return fail(err)
			}
			lns = append(lns, l)
		}
	}
	if len(lns) != len(n.Ports) {
		return fail(fmt.Errorf("%d listeners for %d ports", len(lns), len(n.Ports)))
	}
	for i, l := range lns {
		ta, ok := l.Addr().(*net.TCPAddr)
		if !ok || !ta.IP.Equal(net.IPv4(127, 0, 0, 1)) || ta.Port != int(n.Ports[i]) {
			return fail(fmt.Errorf("listener %d is on %v, want 127.0.0.1:%d", i, l.Addr(), n.Ports[i]))
		}
	}
	return lns, nil
}

// Close closes the socketpair and the reserved descriptors (the parent's
// copies; the child's are its own). Safe to call more than once.
func (n *NetNS) Close() {
	if n.parent != nil {
		n.parent.Close()
		n.parent = nil
	}
	if n.conn >= 0 {
		unix.Close(n.conn)
		n.conn = -1
	}
	for _, fd := range n.fds {
		unix.Close(fd)
	}
	n.fds = nil
}
