package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// ParseAccess builds an Access from an operation and a command-line
// argument, read according to the operation's family:
//
//   - file-*, process-exec*: an absolute path (kernel spelling); a trailing
//     "/" means a directory (vnode type DIRECTORY), otherwise REGULAR-FILE;
//   - network-*: "host:port", or an absolute path for a Unix socket;
//   - mach-*, sysctl-*, ipc-posix-*, user-preference-*, iokit-*: a name
//     (for iokit-* the IOKit class);
//   - signal, process-info*, mach-priv-task-port, mach-task-*: a target
//     word (self, pgrp, others, children, same-sandbox, initproc);
//   - system-socket: AF_UNIX, AF_INET, AF_INET6, AF_SYSTEM or a number;
//   - system-mac-syscall: "POLICY:NUMBER", e.g. "Sandbox:2";
//   - any other operation: no argument.
func ParseAccess(op, arg string) (Access, error) {
	if err := checkOp(&op); err != nil {
		return Access{}, err
	}
	a := Access{Op: op}
	bad := func(want string) (Access, error) {
		return Access{}, fmt.Errorf("sim: %s %q: want %s: %w", op, arg, want, ErrAccess)
	}
	switch {
	case strings.HasPrefix(op, "file-") || strings.HasPrefix(op, "process-exec"):
		if !strings.HasPrefix(arg, "/") {
			return bad("an absolute path")
		}
		a.Path, a.VnodeType = arg, "REGULAR-FILE"
		if len(arg) > 1 && strings.HasSuffix(arg, "/") {
			a.Path, a.VnodeType = strings.TrimRight(arg, "/"), "DIRECTORY"
		}
	case strings.HasPrefix(op, "network-"):
		if !strings.HasPrefix(arg, "/") {
			if _, err := parseEndpoint(arg); err != nil {
				return Access{}, err
			}
		}
		a.Addr = arg
	case op == "signal" || strings.HasPrefix(op, "process-info") || op == "mach-priv-task-port" || strings.HasPrefix(op, "mach-task"):
		switch arg {
		case "self", "pgrp", "others", "children", "same-sandbox", "initproc":
			a.Target = arg
		default:
			return bad("self, pgrp, others, children, same-sandbox or initproc")
		}
	case op == "system-socket":
		if n, ok := socketDomains[arg]; ok {
			a.SocketDomain = n
		} else if n, err := strconv.Atoi(arg); err == nil && n > 0 {
			a.SocketDomain = n
		} else {
			return bad("AF_UNIX, AF_INET, AF_INET6, AF_SYSTEM or a domain number")
		}
	case op == "system-mac-syscall":
		name, num, ok := strings.Cut(arg, ":")
		n, err := strconv.Atoi(num)
		if !ok || name == "" || err != nil {
			return bad("POLICY:NUMBER, e.g. Sandbox:2")
		}
		a.Name, a.MacSyscall = name, n
	case strings.HasPrefix(op, "mach-") || strings.HasPrefix(op, "sysctl-") || strings.HasPrefix(op, "ipc-posix") || strings.HasPrefix(op, "user-preference") || strings.HasPrefix(op, "iokit-"):
		if arg == "" {
			return bad("a name")
		}
		a.Name = arg
	default:
		if arg != "" {
			return bad("no argument")
		}
	}
	return a, nil
}

// Explain lowers p with env, reads arg for op (see [ParseAccess]) and
// decides. Parameters bound per spawn (a forking policy's run marker) are
// left unbound, so the marker rules match nothing.
func Explain(p profile.Policy, env profile.Env, op, arg string) (Decision, error) {
	a, err := ParseAccess(op, arg)
	if err != nil {
		return Decision{}, err
	}
	plan, err := seatbelt.Lower(p, env)
	if err != nil {
		return Decision{}, err
	}
	return Decide(plan.Profile, a)
}
