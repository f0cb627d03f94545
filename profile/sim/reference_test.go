package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

func mustPolicy(tb testing.TB, opts ...profile.Option) profile.Policy {
	tb.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestReference checks the reference's statement of intent by hand, and
// that the lowered profile agrees on each case.
func TestReference(t *testing.T) {
	env := profile.Env{Home: "/Users/me", Resolved: map[string]string{"/tmp/w": "/private/tmp/w"}, Links: []string{"/Users/me/link"}}
	marker := map[string]string{seatbelt.ParamRunPrefix: "pc-1.", seatbelt.ParamRunMarker: "pc-1.r1"}
	tests := []struct {
		name    string
		policy  profile.Policy
		access  Access
		allowed bool
		why     string // prefix of the reason
	}{
		{"policy read", mustPolicy(t, profile.Read("/Users/me")), Access{Op: "file-read-data", Path: "/Users/me/notes"}, true, "policy:"},
		{"read is not write", mustPolicy(t, profile.Read("/Users/me")), Access{Op: "file-write-data", Path: "/Users/me/notes"}, false, "base:"},
		{"hard-deny beats read", mustPolicy(t, profile.Read("/Users/me")), Access{Op: "file-read-data", Path: "/Users/me/.ssh/id_rsa"}, false, "hard-deny class secrets"},
		{"hard-deny in another case", mustPolicy(t, profile.Read("/Users/me")), Access{Op: "file-read-data", Path: "/users/ME/.SSH/id_rsa"}, false, "hard-deny class secrets"},
		{"waiver lifts it", mustPolicy(t, profile.Read("/Users/me"), profile.Waive(profile.Secrets)), Access{Op: "file-read-data", Path: "/Users/me/.ssh/id_rsa"}, true, "policy:"},
		{"resolved path", mustPolicy(t, profile.ReadWrite("/tmp/w")), Access{Op: "file-write-create", Path: "/private/tmp/w/f"}, true, "policy:"},
		{"unresolved spelling", mustPolicy(t, profile.ReadWrite("/tmp/w")), Access{Op: "file-write-create", Path: "/tmp/w/f"}, false, "base:"},
		{"exec", mustPolicy(t, profile.Exec("/opt/t")), Access{Op: "file-map-executable", Path: "/opt/t/lib.dylib"}, true, "policy:"},
		{"ancestor metadata", mustPolicy(t, profile.Read("/opt/t/x")), Access{Op: "file-read-metadata", Path: "/opt"}, true, "policy: metadata"},
		{"ancestor data", mustPolicy(t, profile.Read("/opt/t/x")), Access{Op: "file-read-data", Path: "/opt"}, false, "base:"},
		{"link metadata", mustPolicy(t), Access{Op: "file-read-metadata", Path: "/Users/me/link"}, true, "links:"},
		{"root link", mustPolicy(t), Access{Op: "file-read-metadata", Path: "/tmp"}, true, "links:"},
		{"loopback", mustPolicy(t, profile.Network(profile.NetworkLoopback, profile.AnyPort)), Access{Op: "network-outbound", Addr: "127.0.0.1:5432"}, true, "policy: network loopback"},
		{"loopback not remote", mustPolicy(t, profile.Network(profile.NetworkLoopback, profile.AnyPort)), Access{Op: "network-outbound", Addr: "10.1.2.3:443"}, false, "base:"},
		{"loopback port", mustPolicy(t, profile.Network(profile.NetworkLoopback, 8080)), Access{Op: "network-outbound", Addr: "127.0.0.1:5432"}, false, "base:"},
		{"network on", mustPolicy(t, profile.Network(profile.NetworkOn)), Access{Op: "network-outbound", Addr: "10.1.2.3:443"}, true, "policy: network on"},
		{"network off", mustPolicy(t), Access{Op: "network-outbound", Addr: "127.0.0.1:80"}, false, "base:"},
		{"unix socket", mustPolicy(t, profile.UnixSocket("/private/var/run/s")), Access{Op: "network-outbound", Addr: "/private/var/run/s"}, true, "policy: Unix socket"},
		{"mach", mustPolicy(t, profile.MachLookup("com.example.x")), Access{Op: "mach-lookup", Name: "com.example.x"}, true, "policy: Mach"},
		{"fork", mustPolicy(t, profile.Fork()), Access{Op: "process-fork"}, true, "policy: fork"},
		{"no fork", mustPolicy(t), Access{Op: "process-fork"}, false, "base:"},
		{"seatbelt allow", mustPolicy(t, profile.Seatbelt(`(allow file-read* (subpath "/opt"))`)), Access{Op: "file-read-data", Path: "/opt/x"}, true, "seatbelt layer"},
		{"seatbelt deny after grant", mustPolicy(t, profile.Read("/opt"), profile.Seatbelt(`(deny file-read* (literal "/opt/s"))`)), Access{Op: "file-read-data", Path: "/opt/s"}, false, "seatbelt layer"},
		{"seatbelt resolved", mustPolicy(t, profile.Seatbelt(`(allow file-read* (subpath "/tmp/w"))`)), Access{Op: "file-read-data", Path: "/private/tmp/w/x"}, true, "seatbelt layer"},
		{"marker", mustPolicy(t, profile.Fork()), Access{Op: "mach-lookup", Name: "pc-1.r1", Params: marker}, true, "the run's marker"},
		{"other run", mustPolicy(t, profile.Fork()), Access{Op: "mach-lookup", Name: "pc-1.r2", Params: marker}, false, "another run"},
		{"base", mustPolicy(t), Access{Op: "file-read-data", Path: "/usr/lib/libSystem.B.dylib"}, true, "base:"},
		{"default", mustPolicy(t), Access{Op: "file-read-data", Path: "/opt/x"}, false, "base: denied by default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allowed, why := Reference(tt.policy, env, tt.access)
			if allowed != tt.allowed || !strings.HasPrefix(why, tt.why) {
				t.Errorf("Reference = %v, %q; want %v, %q...", allowed, why, tt.allowed, tt.why)
			}
			plan, err := seatbelt.Lower(tt.policy, env)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkCase(tt.policy, env, plan, tt.access); err != nil {
				t.Error(err)
			}
		})
	}
	if ok, why := Reference(mustPolicy(t), env, Access{Op: "file-read-all"}); ok || !strings.HasPrefix(why, "error:") {
		t.Errorf("Reference on an unknown operation = %v, %q; want false, error: ...", ok, why)
	}
	if _, _, err := reference(mustPolicy(t), env, Access{Op: "file-read-all"}); !errors.Is(err, ErrOperation) {
		t.Errorf("reference on an unknown operation: %v, want ErrOperation", err)
	}
}

func TestParseAccess(t *testing.T) {
	tests := []struct {
		op, arg string
		want    Access
	}{
		{"file-read-data", "/etc/hosts", Access{Op: "file-read-data", Path: "/etc/hosts", VnodeType: "REGULAR-FILE"}},
		{"file-read-data", "/etc/", Access{Op: "file-read-data", Path: "/etc", VnodeType: "DIRECTORY"}},
		{"process-exec", "/bin/sh", Access{Op: "process-exec*", Path: "/bin/sh", VnodeType: "REGULAR-FILE"}},
		{"network-outbound", "127.0.0.1:80", Access{Op: "network-outbound", Addr: "127.0.0.1:80"}},
		{"network-outbound", "/private/var/run/docker.sock", Access{Op: "network-outbound", Addr: "/private/var/run/docker.sock"}},
		{"mach-lookup", "com.apple.trustd", Access{Op: "mach-lookup", Name: "com.apple.trustd"}},
		{"sysctl-read", "kern.procargs2", Access{Op: "sysctl-read", Name: "kern.procargs2"}},
		{"signal", "others", Access{Op: "signal", Target: "others"}},
		{"process-info-pidinfo", "self", Access{Op: "process-info-pidinfo", Target: "self"}},
		{"system-socket", "AF_INET6", Access{Op: "system-socket", SocketDomain: 30}},
		{"system-mac-syscall", "Sandbox:2", Access{Op: "system-mac-syscall", Name: "Sandbox", MacSyscall: 2}},
		{"process-fork", "", Access{Op: "process-fork"}},
	}
	for _, tt := range tests {
		got, err := ParseAccess(tt.op, tt.arg)
		if err != nil {
			t.Errorf("ParseAccess(%q, %q): %v", tt.op, tt.arg, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseAccess(%q, %q) (-want +got):\n%s", tt.op, tt.arg, diff)
		}
	}
	bad := []struct {
		op, arg string
		want    error
	}{
		{"file-read", "/x", ErrOperation},
		{"file-read-data", "relative", ErrAccess},
		{"network-outbound", "example.com:80", ErrAccess},
		{"network-outbound", "127.0.0.1", ErrAccess},
		{"signal", "everyone", ErrAccess},
		{"system-socket", "AF_BOGUS", ErrAccess},
		{"system-mac-syscall", "Sandbox", ErrAccess},
		{"process-fork", "x", ErrAccess},
		{"mach-lookup", "", ErrAccess},
	}
	for _, tt := range bad {
		if a, err := ParseAccess(tt.op, tt.arg); !errors.Is(err, tt.want) {
			t.Errorf("ParseAccess(%q, %q) = %+v, %v; want an error wrapping %v", tt.op, tt.arg, a, err, tt.want)
		}
	}
}

func TestExplain(t *testing.T) {
	p := mustPolicy(t, profile.Read("/Users/me/src"))
	env := profile.Env{Home: "/Users/me"}
	d, err := Explain(p, env, "file-read-data", "/Users/me/.ssh/id_rsa")
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Layer != seatbelt.LayerHardDeny || !strings.HasPrefix(d.String(), "denied by rule ") || !strings.Contains(d.String(), `(hard-deny): (deny file-read*`) {
		t.Errorf("Explain(~/.ssh/id_rsa) = %v; want denied by a hard-deny rule", d)
	}
	d, err = Explain(p, env, "file-read-data", "/Users/me/src/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.Layer != seatbelt.LayerPolicy {
		t.Errorf("Explain(src/main.go) = %v; want allowed by the policy layer", d)
	}
	d, err = Explain(p, env, "file-read-data", "/Users/me/Documents/x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.String(), "denied by default"; got != want {
		t.Errorf("Explain(Documents/x) = %q, want %q", got, want)
	}
	if _, err := Explain(p, env, "file-read", "/x"); !errors.Is(err, ErrOperation) {
		t.Errorf("Explain with a bad operation: %v, want ErrOperation", err)
	}
}
