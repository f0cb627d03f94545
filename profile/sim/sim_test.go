package sim

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/profile/sbpl"
)

// decide parses an SBPL profile and decides one access.
func decide(tb testing.TB, src string, a Access) (Decision, error) {
	tb.Helper()
	prof, err := sbpl.Parse(src)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", src, err)
	}
	return Decide(prof, a)
}

// verdict is what the table tests compare: allowed, and the deciding rule.
type verdict struct {
	Allowed bool
	Rule    int
}

func TestDecide(t *testing.T) {
	read := func(p string) Access { return Access{Op: "file-read-data", Path: p, VnodeType: "REGULAR-FILE"} }
	tests := []struct {
		name    string
		profile string
		access  Access
		want    verdict
	}{
		// Precedence (agent-safehouse ssh.bats, fence macos.go, Bazel).
		{"deny default", `(version 1)(deny default)`, read("/x"), verdict{false, 0}},
		{"no rule: allowed", `(version 1)(deny file-write*)`, read("/x"), verdict{true, -1}},
		{"specific allow before wildcard deny", `(version 1)(deny default)(allow file-read-data (subpath "/x"))(deny file-read* (subpath "/x"))`, read("/x/y"), verdict{true, 1}},
		{"wildcard allow before specific deny", `(version 1)(deny default)(deny file-read-data (subpath "/x"))(allow file-read* (subpath "/x"))`, read("/x/y"), verdict{false, 1}},
		{"specific rule that does not match falls back", `(version 1)(deny default)(allow file-read-data (subpath "/a"))(deny file-read* (subpath "/x"))`, read("/x/y"), verdict{false, 2}},
		{"last match among equals: allow", `(version 1)(deny default)(deny file-read* (literal "/x/y"))(allow file-read* (subpath "/x"))`, read("/x/y"), verdict{true, 2}},
		{"last match among equals: deny", `(version 1)(deny default)(allow file-read* (subpath "/x"))(deny file-read* (literal "/x/y"))`, read("/x/y"), verdict{false, 2}},
		{"longer family beats shorter", `(version 1)(deny default)(allow file-read* (subpath "/x"))(deny file* (subpath "/x"))`, read("/x/y"), verdict{true, 1}},
		{"wildcard beats default", `(version 1)(allow file-read*)(deny default)`, read("/x"), verdict{true, 0}},
		{"operation not covered", `(version 1)(deny default)(allow file-write* (subpath "/x"))`, read("/x/y"), verdict{false, 0}},
		{"several filters: any", `(version 1)(deny default)(allow file-read* (literal "/a") (literal "/x"))`, read("/x"), verdict{true, 1}},
		{"rule naming both spellings", `(version 1)(deny default)(deny file-read-data (subpath "/x"))(allow file-read* file-read-data (subpath "/x"))`, read("/x/y"), verdict{true, 2}},
		{"unknown filter beside a match", `(version 1)(deny default)(allow file-read* (literal "/x") (no-such-filter "/x"))`, read("/x"), verdict{true, 1}},
		{"process-exec alias", `(version 1)(deny default)(allow process-exec (literal "/bin/sh"))`, Access{Op: "process-exec*", Path: "/bin/sh"}, verdict{true, 1}},
		// (deny default) leaves the stragglers open (crbug 799149).
		{"deny default leaves file-map-executable", `(version 1)(deny default)`, Access{Op: "file-map-executable", Path: "/x"}, verdict{true, -1}},
		{"deny default leaves process-info", `(version 1)(deny default)`, Access{Op: "process-info-pidinfo", Target: "others"}, verdict{true, -1}},
		{"straggler denied explicitly", `(version 1)(deny default)(deny process-info*)`, Access{Op: "process-info-pidinfo", Target: "others"}, verdict{false, 1}},
		// Path filters.
		{"literal", `(version 1)(deny default)(allow file-read* (literal "/x"))`, read("/x/y"), verdict{false, 0}},
		{"path is literal", `(version 1)(deny default)(allow file-read* (path "/x/y"))`, read("/x/y"), verdict{true, 1}},
		{"subpath itself", `(version 1)(deny default)(allow file-read* (subpath "/x"))`, read("/x"), verdict{true, 1}},
		{"subpath is not a prefix", `(version 1)(deny default)(allow file-read* (subpath "/x"))`, read("/xy"), verdict{false, 0}},
		{"subpath root", `(version 1)(deny default)(allow file-read* (subpath "/"))`, read("/any/thing"), verdict{true, 1}},
		{"prefix", `(version 1)(deny default)(allow file-read* (prefix "/x"))`, read("/xy"), verdict{true, 1}},
		{"regex unanchored", `(version 1)(deny default)(allow file-read* (regex #"/\.git/"))`, read("/src/.git/config"), verdict{true, 1}},
		{"regex anchored", `(version 1)(deny default)(allow file-read* (regex #"^/dev/ttys[0-9]+$"))`, read("/dev/ttys003"), verdict{true, 1}},
		{"regex anchored no match", `(version 1)(deny default)(allow file-read* (regex #"^/dev/ttys[0-9]+$"))`, read("/dev/ttys003x"), verdict{false, 0}},
		{"path-ancestors", `(version 1)(deny default)(allow file-read-metadata (path-ancestors "/System/Volumes/Data/private"))`, Access{Op: "file-read-metadata", Path: "/System/Volumes"}, verdict{true, 1}},
		{"path-ancestors not below", `(version 1)(deny default)(allow file-read-metadata (path-ancestors "/System/Volumes/Data/private"))`, Access{Op: "file-read-metadata", Path: "/System/Volumes/Data/private/tmp"}, verdict{false, 0}},
		{"path filter on a name access", `(version 1)(deny default)(allow mach-lookup (subpath "/"))`, Access{Op: "mach-lookup", Name: "com.apple.x"}, verdict{false, 0}},
		// Logic.
		{"require-all", `(version 1)(deny default)(allow file-read* (require-all (subpath "/x") (require-not (literal "/x/s"))))`, read("/x/y"), verdict{true, 1}},
		{"require-not excludes", `(version 1)(deny default)(allow file-read* (require-all (subpath "/x") (require-not (literal "/x/s"))))`, read("/x/s"), verdict{false, 0}},
		{"require-any", `(version 1)(deny default)(allow file-read* (require-any (literal "/a") (literal "/b")))`, read("/b"), verdict{true, 1}},
		// vnode-type, target.
		{"vnode-type match", `(version 1)(deny default)(allow file-read* (vnode-type REGULAR-FILE))`, read("/x"), verdict{true, 1}},
		{"vnode-type other", `(version 1)(deny default)(allow file-read* (vnode-type DIRECTORY))`, read("/x"), verdict{false, 0}},
		{"vnode-type unknown", `(version 1)(deny default)(allow file-read* (vnode-type DIRECTORY))`, Access{Op: "file-read-data", Path: "/x"}, verdict{false, 0}},
		{"target self", `(version 1)(deny default)(allow signal (target self))`, Access{Op: "signal", Target: "self"}, verdict{true, 1}},
		{"target others", `(version 1)(deny default)(allow signal (target self))`, Access{Op: "signal", Target: "others"}, verdict{false, 0}},
		{"same-sandbox covers children", `(version 1)(deny default)(allow signal (target same-sandbox))`, Access{Op: "signal", Target: "children"}, verdict{true, 1}},
		// Names.
		{"sysctl-name", `(version 1)(deny default)(allow sysctl-read (sysctl-name "kern.ostype"))`, Access{Op: "sysctl-read", Name: "kern.ostype"}, verdict{true, 1}},
		{"sysctl-name is exact", `(version 1)(deny default)(allow sysctl-read (sysctl-name "kern.ostype"))`, Access{Op: "sysctl-read", Name: "kern.ostypex"}, verdict{false, 0}},
		{"sysctl-name-prefix", `(version 1)(allow sysctl-read)(deny sysctl-read (sysctl-name-prefix "kern.procargs"))`, Access{Op: "sysctl-read", Name: "kern.procargs2"}, verdict{false, 1}},
		{"sysctl-name-regex", `(version 1)(allow sysctl-read)(deny sysctl-read (sysctl-name-regex #"^kern\.proc\."))`, Access{Op: "sysctl-read", Name: "kern.proc.pid.1"}, verdict{false, 1}},
		{"sysctl names are case-sensitive", `(version 1)(allow sysctl-read)(deny sysctl-read (sysctl-name "kern.procargs2"))`, Access{Op: "sysctl-read", Name: "KERN.PROCARGS2"}, verdict{true, 0}},
		{"global-name", `(version 1)(deny default)(allow mach-lookup (global-name "com.apple.trustd"))`, Access{Op: "mach-lookup", Name: "com.apple.trustd"}, verdict{true, 1}},
		{"global-name-prefix", `(version 1)(deny default)(allow mach-lookup (global-name-prefix "com.apple."))`, Access{Op: "mach-lookup", Name: "com.apple.trustd"}, verdict{true, 1}},
		// Network (Codex network policies, zeroclaw-labs/zeroclaw#4764).
		{"remote localhost", `(version 1)(deny default)(allow network-outbound (remote ip "localhost:*"))`, Access{Op: "network-outbound", Addr: "127.0.0.1:80"}, verdict{true, 1}},
		{"remote localhost v6", `(version 1)(deny default)(allow network-outbound (remote ip "localhost:*"))`, Access{Op: "network-outbound", Addr: "[::1]:80"}, verdict{true, 1}},
		{"remote localhost not others", `(version 1)(deny default)(allow network-outbound (remote ip "localhost:*"))`, Access{Op: "network-outbound", Addr: "10.0.0.1:80"}, verdict{false, 0}},
		{"remote any host", `(version 1)(deny default)(allow network-outbound (remote ip "*:*"))`, Access{Op: "network-outbound", Addr: "10.0.0.1:80"}, verdict{true, 1}},
		{"remote port", `(version 1)(deny default)(allow network-outbound (remote ip "localhost:8080"))`, Access{Op: "network-outbound", Addr: "127.0.0.1:80"}, verdict{false, 0}},
		{"remote tcp not udp", `(version 1)(deny default)(allow network-outbound (remote tcp "*:*"))`, Access{Op: "network-outbound", Addr: "10.0.0.1:53", Proto: "udp"}, verdict{false, 0}},
		{"remote ip4 not v6", `(version 1)(deny default)(allow network-outbound (remote ip4 "*:*"))`, Access{Op: "network-outbound", Addr: "[2001:db8::1]:53"}, verdict{false, 0}},
		{"local on bind", `(version 1)(deny default)(allow network-bind (local ip "localhost:*"))`, Access{Op: "network-bind", Addr: "127.0.0.1:8080"}, verdict{true, 1}},
		{"remote does not apply to bind", `(version 1)(deny default)(allow network-bind (remote ip "*:*"))`, Access{Op: "network-bind", Addr: "127.0.0.1:8080"}, verdict{false, 0}},
		{"unix socket", `(version 1)(deny default)(allow network-outbound (remote unix-socket (path-literal "/private/var/run/s")))`, Access{Op: "network-outbound", Addr: "/private/var/run/s"}, verdict{true, 1}},
		{"unix socket subpath", `(version 1)(deny default)(allow network-outbound (remote unix-socket (subpath "/private/var/run")))`, Access{Op: "network-outbound", Addr: "/private/var/run/s"}, verdict{true, 1}},
		{"unix socket filter on ip", `(version 1)(deny default)(allow network-outbound (remote unix-socket (subpath "/")))`, Access{Op: "network-outbound", Addr: "127.0.0.1:80"}, verdict{false, 0}},
		{"path filter on a socket", `(version 1)(allow network-outbound)(deny network-outbound (literal "/private/var/run/s"))`, Access{Op: "network-outbound", Addr: "/private/var/run/s"}, verdict{false, 1}},
		// Extensions, MAC syscalls, socket domains.
		{"extension held", `(version 1)(deny default)(allow file-read* (extension "com.apple.app-sandbox.read"))`, Access{Op: "file-read-data", Path: "/x", Extensions: []string{"com.apple.app-sandbox.read"}}, verdict{true, 1}},
		{"extension not held", `(version 1)(deny default)(allow file-read* (extension "com.apple.app-sandbox.read"))`, read("/x"), verdict{false, 0}},
		{"mac syscall", `(version 1)(deny default)(allow system-mac-syscall (require-all (mac-policy-name "Sandbox") (mac-syscall-number 2)))`, Access{Op: "system-mac-syscall", Name: "Sandbox", MacSyscall: 2}, verdict{true, 1}},
		{"mac syscall other number", `(version 1)(deny default)(allow system-mac-syscall (require-all (mac-policy-name "Sandbox") (mac-syscall-number 2)))`, Access{Op: "system-mac-syscall", Name: "Sandbox", MacSyscall: 5}, verdict{false, 0}},
		{"socket-domain by name", `(version 1)(deny default)(allow system-socket (socket-domain AF_UNIX))`, Access{Op: "system-socket", SocketDomain: 1}, verdict{true, 1}},
		{"socket-domain by number", `(version 1)(deny default)(allow system-socket (socket-domain 30))`, Access{Op: "system-socket", SocketDomain: 30}, verdict{true, 1}},
		{"socket-domain other", `(version 1)(deny default)(allow system-socket (socket-domain AF_UNIX))`, Access{Op: "system-socket", SocketDomain: 2}, verdict{false, 0}},
		// Parameters.
		{"param bound", `(version 1)(deny default)(allow file-read* (subpath (param "ROOT")))`, Access{Op: "file-read-data", Path: "/r/x", Params: map[string]string{"ROOT": "/r"}}, verdict{true, 1}},
		{"param unbound never matches", `(version 1)(deny default)(allow file-read* (subpath (param "ROOT")))`, read("/r/x"), verdict{false, 0}},
		{"param unbound deny never matches", `(version 1)(allow default)(deny mach-lookup (global-name-prefix (param "P")))`, Access{Op: "mach-lookup", Name: "x"}, verdict{true, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(t, tt.profile, tt.access)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tt.want, verdict{d.Allowed, d.Rule}); diff != "" {
				t.Errorf("Decide(%s, %v) (-want +got):\n%s", tt.profile, tt.access, diff)
			}
		})
	}
}

func TestDecideErrors(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		access  Access
		want    error
	}{
		{"wildcard-free unknown op", `(version 1)(deny default)`, Access{Op: "file-read-everything"}, ErrOperation},
		{"default is no access", `(version 1)(deny default)`, Access{Op: "default"}, ErrOperation},
		{"unknown filter", `(version 1)(deny default)(allow file-read* (no-such-filter "/x"))`, Access{Op: "file-read-data", Path: "/x"}, ErrUnknownFilter},
		{"unmodelled filter", `(version 1)(deny default)(allow file-read* (file-mode 4))`, Access{Op: "file-read-data", Path: "/x"}, ErrUnsupportedFilter},
		{"untranslatable regex", `(version 1)(deny default)(allow file-read* (regex #"(?i)^/x"))`, Access{Op: "file-read-data", Path: "/x"}, ErrRegex},
		{"bad address", `(version 1)(deny default)(allow network-outbound (remote ip "*:*"))`, Access{Op: "network-outbound", Addr: "example.com:80"}, ErrAccess},
		{"bad network host in rule", `(version 1)(deny default)(allow network-outbound (remote ip "127.0.0.1:*"))`, Access{Op: "network-outbound", Addr: "127.0.0.1:80"}, ErrFilterArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(t, tt.profile, tt.access)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decide = %v, %v; want an error wrapping %v", d, err, tt.want)
			}
		})
	}
	var re *RuleError
	_, err := decide(t, `(version 1)(deny default)(allow file-read* (file-mode 4))`, Access{Op: "file-read-data", Path: "/x"})
	if !errors.As(err, &re) || re.Index != 1 || !errors.Is(err, ErrUndecidable) {
		t.Errorf("error %v: want a *RuleError for rule 1 wrapping ErrUndecidable", err)
	}
}

// TestDecideDegrades: a rule the simulator cannot evaluate leaves every
// access it could not decide decided, and makes the others undecidable
// with the rule named, never a wrong answer.
func TestDecideDegrades(t *testing.T) {
	read := Access{Op: "file-read-data", Path: "/x/y", VnodeType: "REGULAR-FILE"}
	tests := []struct {
		name    string
		profile string
		access  Access
		want    verdict
		undec   int // index of the rule named when undecidable, else -1
	}{
		{"unknown filter on another operation", `(version 1)(deny default)(allow mach-lookup (require-any (global-nam "x")))(allow file-read* (subpath "/x"))`, read, verdict{true, 2}, -1},
		{"unmodelled filter on another operation", `(version 1)(deny default)(allow mach-lookup (file-mode 4))`, read, verdict{false, 0}, -1},
		{"unknown filter outranked by a later match", `(version 1)(deny default)(deny file-read* (no-such-filter "/x"))(allow file-read* (subpath "/x"))`, read, verdict{true, 2}, -1},
		{"unknown filter could decide", `(version 1)(deny default)(allow file-read* (subpath "/x"))(deny file-read* (no-such-filter "/x"))`, read, verdict{}, 2},
		{"unknown filter beside a match", `(version 1)(deny default)(allow file-read* (literal "/x/y") (no-such-filter "/x"))`, read, verdict{true, 1}, -1},
		{"require-all with a false part", `(version 1)(deny default)(allow file-read* (subpath "/x"))(deny file-read* (require-all (literal "/z") (file-mode 4)))`, read, verdict{true, 1}, -1},
		{"require-not of unknown", `(version 1)(deny default)(deny file-read* (require-not (file-mode 4)))`, read, verdict{}, 1},
		{"unknown operation in another family", `(version 1)(deny default)(allow iokit-frobnicate)(allow file-read* (subpath "/x"))`, read, verdict{true, 2}, -1},
		{"unknown operation outranked by a later filtered one", `(version 1)(deny default)(deny file-frobnicate)(allow file-read-data (subpath "/x"))`, read, verdict{true, 2}, -1},
		{"unknown operation could outrank", `(version 1)(deny default)(allow file-read* (subpath "/x"))(deny file-frobnicate)`, read, verdict{}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(t, tt.profile, tt.access)
			if tt.undec >= 0 {
				var re *RuleError
				if !errors.Is(err, ErrUndecidable) || !errors.As(err, &re) || re.Index != tt.undec {
					t.Fatalf("Decide = %v, %v; want undecidable naming rule %d", d, err, tt.undec)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tt.want, verdict{d.Allowed, d.Rule}); diff != "" {
				t.Errorf("Decide(%s, %v) (-want +got):\n%s", tt.profile, tt.access, diff)
			}
		})
	}
}

// TestDecideRealForms: the aliases of Apple's SBPL prelude (0xbf00/simbple
// src/scm/sbpl_v1.scm) and the one-argument network filters real profiles
// write.
func TestDecideRealForms(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		access  Access
		want    verdict
	}{
		{"process-exec", `(version 1)(deny default)(allow process-exec (literal "/bin/sh"))`, Access{Op: "process-exec-interpreter", Path: "/bin/sh"}, verdict{true, 1}},
		{"ipc-posix-sem", `(version 1)(deny default)(allow ipc-posix-sem)`, Access{Op: "ipc-posix-sem-open", Name: "x"}, verdict{true, 1}},
		{"ipc-posix-shm", `(version 1)(deny default)(allow ipc-posix-shm)`, Access{Op: "ipc-posix-shm-write-data", Name: "x"}, verdict{true, 1}},
		{"ipc-posix-shm-read*", `(version 1)(deny default)(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))`, Access{Op: "ipc-posix-shm-read-data", Name: "apple.cfprefs.501"}, verdict{true, 1}},
		{"ipc-posix-shm-read* not write", `(version 1)(deny default)(allow ipc-posix-shm-read*)`, Access{Op: "ipc-posix-shm-write-data", Name: "x"}, verdict{false, 0}},
		{"iokit-open", `(version 1)(deny default)(allow iokit-open (iokit-user-client-class "RootDomainUserClient"))`, Access{Op: "iokit-open-user-client", Name: "RootDomainUserClient"}, verdict{true, 1}},
		{"iokit-user-client-class other", `(version 1)(deny default)(allow iokit-open (iokit-user-client-class "RootDomainUserClient"))`, Access{Op: "iokit-open-user-client", Name: "IOSurfaceRootUserClient"}, verdict{false, 0}},
		{"file-unlink", `(version 1)(allow default)(deny file-unlink (subpath "/x"))`, Access{Op: "file-write-unlink", Path: "/x/y"}, verdict{false, 1}},
		{"remote ip any", `(version 1)(deny default)(allow network-outbound (remote ip))`, Access{Op: "network-outbound", Addr: "10.0.0.1:443"}, verdict{true, 1}},
		{"remote ip not a socket", `(version 1)(deny default)(allow network-outbound (remote ip))`, Access{Op: "network-outbound", Addr: "/private/var/run/s"}, verdict{false, 0}},
		{"local ip on bind", `(version 1)(deny default)(allow network-bind (local ip))`, Access{Op: "network-bind", Addr: "127.0.0.1:8080"}, verdict{true, 1}},
		{"remote unix-socket any", `(version 1)(deny default)(deny network*)(allow network* (remote unix-socket))`, Access{Op: "network-outbound", Addr: "/private/var/run/s"}, verdict{true, 2}},
		{"remote unix-socket not IP", `(version 1)(deny default)(deny network*)(allow network* (remote unix-socket))`, Access{Op: "network-outbound", Addr: "10.0.0.1:443"}, verdict{false, 1}},
		{"from and to", `(version 1)(deny default)(allow network-outbound (to ip "localhost:*"))`, Access{Op: "network-outbound", Addr: "127.0.0.1:80"}, verdict{true, 1}},
		{"debug form", "(version 1)\n(debug deny)\n(deny default)\n(allow file-read* (subpath \"/x\"))", Access{Op: "file-read-data", Path: "/x/y"}, verdict{true, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(t, tt.profile, tt.access)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tt.want, verdict{d.Allowed, d.Rule}); diff != "" {
				t.Errorf("Decide(%s, %v) (-want +got):\n%s", tt.profile, tt.access, diff)
			}
		})
	}
}

func TestDecisionString(t *testing.T) {
	prof := &sbpl.Profile{Version: 1, Rules: []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"default"}, Layer: "header"},
		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{sbpl.Subpath("/Users/me")}, Layer: "policy"},
		{Effect: sbpl.Deny, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{sbpl.Subpath("/Users/me/.ssh")}, Layer: "hard-deny"},
	}}
	tests := []struct {
		path, want string
	}{
		{"/Users/me/.ssh/id_rsa", `denied by rule 2 (hard-deny): (deny file-read* (subpath "/Users/me/.ssh"))`},
		{"/Users/me/notes", `allowed by rule 1 (policy): (allow file-read* (subpath "/Users/me"))`},
		{"/etc/passwd", `denied by default`},
	}
	for _, tt := range tests {
		d, err := Decide(prof, Access{Op: "file-read-data", Path: tt.path})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.String(); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.path, got, tt.want)
		}
	}
	d, err := Decide(prof, Access{Op: "file-map-executable", Path: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.String(), "allowed by default (no rule covers file-map-executable)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
