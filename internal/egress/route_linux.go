package egress

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// routesHere reports whether Linux delivers a connection to a on this
// machine: the route the kernel picks for it (RTM_GETROUTE, rtnetlink(7),
// what `ip route get` asks) is of type local. That covers each interface
// address and also every address of a prefix on lo (fib_add_ifaddr adds a
// loopback device's prefix as a local route, as for 127.0.0.0/8) and of an
// AnyIP route (`ip route add local P dev lo`), which no interface lists
// (TestRTEgressLocalRoute). No route (unreachable, prohibited, blackhole)
// is not here; any other failure reads as here (fail closed).
func routesHere(a netip.Addr) bool {
	local, err := routeLocal(a)
	return err != nil || local
}

func routeLocal(a netip.Addr) (bool, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	fam := uint8(unix.AF_INET6)
	if a.Is4() {
		fam = unix.AF_INET
	}
	ab := a.AsSlice()
	attrLen := unix.SizeofRtAttr + len(ab) // 4 or 16: aligned
	msg := make([]byte, unix.SizeofNlMsghdr+unix.SizeofRtMsg+attrLen)
	*(*unix.NlMsghdr)(unsafe.Pointer(&msg[0])) = unix.NlMsghdr{Len: uint32(len(msg)), Type: unix.RTM_GETROUTE, Flags: unix.NLM_F_REQUEST, Seq: 1}
	*(*unix.RtMsg)(unsafe.Pointer(&msg[unix.SizeofNlMsghdr])) = unix.RtMsg{Family: fam, Dst_len: uint8(a.BitLen())}
	at := msg[unix.SizeofNlMsghdr+unix.SizeofRtMsg:]
	*(*unix.RtAttr)(unsafe.Pointer(&at[0])) = unix.RtAttr{Len: uint16(attrLen), Type: unix.RTA_DST}
	copy(at[unix.SizeofRtAttr:], ab)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false, err
	}
	buf := make([]byte, 4096)
	for {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return false, err
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // not the kernel's
		}
		return parseRouteReply(buf[:n])
	}
}

// parseRouteReply reads the kernel's answer to one RTM_GETROUTE: a route
// (local or not) or an error.
func parseRouteReply(b []byte) (bool, error) {
	if len(b) < unix.SizeofNlMsghdr {
		return false, errors.New("egress: short netlink answer")
	}
	h := (*unix.NlMsghdr)(unsafe.Pointer(&b[0]))
	if int(h.Len) > len(b) || h.Len < unix.SizeofNlMsghdr {
		return false, errors.New("egress: malformed netlink answer")
	}
	body := b[unix.SizeofNlMsghdr:h.Len]
	switch h.Type {
	case unix.NLMSG_ERROR:
		if len(body) < 4 {
			return false, errors.New("egress: short netlink error")
		}
		switch errno := unix.Errno(-int32(binary.NativeEndian.Uint32(body))); errno {
		case 0:
			return false, errors.New("egress: netlink acknowledged a route query with no route")
		case unix.ENETUNREACH, unix.EHOSTUNREACH, unix.EACCES, unix.EINVAL:
			return false, nil // no route: the dial fails too
		default:
			return false, errno
		}
	case unix.RTM_NEWROUTE:
		if len(body) < unix.SizeofRtMsg {
			return false, errors.New("egress: short netlink route")
		}
		return (*unix.RtMsg)(unsafe.Pointer(&body[0])).Type == unix.RTN_LOCAL, nil
	}
	return false, errors.New("egress: unexpected netlink answer")
}
