package cage

import (
	"slices"
	"strings"
)

// EnvPolicy decides which of the caller's environment variables a caged
// process inherits when [Cmd.Env] is nil. A non-nil Cmd.Env is always
// passed exactly as written: explicit variables win.
//
// The zero EnvPolicy is [EnvDropSecrets].
type EnvPolicy struct {
	allowlist bool
	names     []string
}

// EnvDropSecrets passes the caller's variables except those that commonly
// carry secrets or inject code: names ending in _TOKEN, _SECRET, _PASSWORD
// or _API_KEY, names starting with AWS_ or DYLD_, and SSH_AUTH_SOCK,
// LD_PRELOAD and LD_LIBRARY_PATH (the Rust procage crate's list,
// https://docs.rs/crate/procage/0.3.1/source/src/hygiene.rs).
var EnvDropSecrets = EnvPolicy{}

// EnvAllowlist passes exactly the named variables of the caller, and no
// other.
func EnvAllowlist(names ...string) EnvPolicy {
	n := slices.Clone(names)
	slices.Sort(n)
	return EnvPolicy{allowlist: true, names: slices.Compact(n)}
}

// String summarises the policy.
func (p EnvPolicy) String() string {
	if p.allowlist {
		return "allowlist[" + strings.Join(p.names, " ") + "]"
	}
	return "drop-secrets"
}

var (
	secretSuffixes = []string{"_TOKEN", "_SECRET", "_PASSWORD", "_API_KEY"}
	secretPrefixes = []string{"AWS_", "DYLD_"}
	secretNames    = []string{"SSH_AUTH_SOCK", "LD_PRELOAD", "LD_LIBRARY_PATH"}
)

// IsSecret reports whether EnvDropSecrets drops the variable name. Case is
// ignored (github_token is as secret as GITHUB_TOKEN): a drop list errs on
// the side of dropping.
func IsSecret(name string) bool {
	name = strings.ToUpper(name)
	if slices.Contains(secretNames, name) {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// Filter returns the entries of environ ("KEY=value", as os.Environ gives)
// that p passes, in order. Entries without "=" are dropped.
func (p EnvPolicy) Filter(environ []string) []string {
	out := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if p.allowlist {
			if _, found := slices.BinarySearch(p.names, k); !found {
				continue
			}
		} else if IsSecret(k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// environ is the environment a child gets: explicit (non-nil) wins as
// written; otherwise the caller's, filtered. extra entries (a private
// TMPDIR) are added unless the environment already names them.
func environ(p EnvPolicy, explicit, caller []string, extra ...string) []string {
	var env []string
	if explicit != nil {
		env = slices.Clone(explicit)
	} else {
		env = p.Filter(caller)
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		if explicit != nil && slices.ContainsFunc(explicit, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			continue
		}
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		env = append(env, kv)
	}
	return env
}
