package cage

import (
	"regexp"
	"slices"
	"strings"
)

// envPolicy decides which of the caller's environment variables a caged
// process inherits when [Cmd.Env] is nil. A non-nil Cmd.Env is always
// passed exactly as written: explicit variables win. The zero envPolicy is
// envDropSecrets.
type envPolicy struct {
	allowlist bool
	names     []string
}

// envDropSecrets, the default, passes the caller's variables except those
// that commonly carry credentials or inject code ([IsSecret];
// docs/threat-model.md has the table) and those whose value is a URL with
// a password (postgres://user:pw@host).
var envDropSecrets = envPolicy{}

// envAllowlist passes exactly the named variables of the caller.
func envAllowlist(names ...string) envPolicy {
	n := slices.Clone(names)
	slices.Sort(n)
	return envPolicy{allowlist: true, names: slices.Compact(n)}
}

// String summarises the policy.
func (p envPolicy) String() string {
	if p.allowlist {
		return "allowlist[" + strings.Join(p.names, " ") + "]"
	}
	return "drop-secrets"
}

// The drop list (docs/threat-model.md shows it as a table). Sources: the
// Rust procage crate's list
// (https://docs.rs/crate/procage/0.3.1/source/src/hygiene.rs), libpq's
// PGPASSWORD, MySQL's MYSQL_PWD, the twelve-factor DATABASE_URL, the
// credential variables of the AWS, Azure, Google Cloud, GitHub, npm,
// Stripe and Slack tools, and the dynamic linkers' injection variables
// (ld.so(8), dyld(1)).
var (
	// secretNames are dropped exactly.
	secretNames = []string{"API_KEY", "APIKEY", "PASSWORD", "PASSWD", "PRIVATE_KEY", "SECRET", "SSH_AUTH_SOCK", "TOKEN"}
	// secretPrefixes are dropped at the start of a name.
	secretPrefixes = []string{"AWS_", "DYLD_", "GIT_CONFIG_VALUE_", "LD_", "OP_SESSION_", "TF_TOKEN_"}
	// secretInfixes are dropped anywhere in a name.
	secretInfixes = []string{"ACCESSTOKEN", "AUTHTOKEN", "CREDENTIAL", "PASSWD", "PASSWORD", "PRIVATE_KEY", "SECRET", "WEBHOOK"}
	// secretSuffixes are dropped at the end of a name, but for the
	// public keys below.
	secretSuffixes = []string{"_APIKEY", "_AUTH", "_AUTH_CONFIG", "_DSN", "_JWT", "_KEY", "_PASS", "_PAT", "_PWD", "_SESSION", "_SK", "_TOKEN"}
	// publicKeys are names ending in _KEY that hold no secret: public and
	// publishable keys, and the release-signing key fingerprint the
	// official Docker language images set (GPG_KEY).
	publicKeys        = []string{"GPG_KEY"}
	publicKeySuffixes = []string{"_PUBKEY", "_PUBLIC_KEY", "_PUBLISHABLE_KEY"}
)

// IsSecret reports whether a cage without [WithEnvAllowlist] drops the
// variable name. Case is ignored (github_token is as secret as
// GITHUB_TOKEN): a drop list errs on the side of dropping.
func IsSecret(name string) bool {
	name = strings.ToUpper(name)
	has := func(list []string, f func(string, string) bool) bool {
		return slices.ContainsFunc(list, func(s string) bool { return f(name, s) })
	}
	switch {
	case slices.Contains(secretNames, name), has(secretPrefixes, strings.HasPrefix), has(secretInfixes, strings.Contains):
		return true
	case slices.Contains(publicKeys, name), has(publicKeySuffixes, strings.HasSuffix):
		return false
	}
	return has(secretSuffixes, strings.HasSuffix)
}

// hasURLPassword reports whether value holds a credential in a
// connection string: a URL with user information (scheme://user:pw@host,
// or a token as the user, https://ghp_x@github.com), a password parameter
// (libpq's "host=db password=x", a URL's ?password=), or the Go MySQL
// driver's user:pw@tcp(host) form.
func hasURLPassword(value string) bool {
	if strings.Contains(strings.ToLower(value), "password=") || mysqlDSN.MatchString(value) {
		return true
	}
	for rest := value; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return false
		}
		rest = rest[i+3:]
		auth := rest
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		if strings.Contains(auth, "@") {
			return true
		}
	}
}

// mysqlDSN matches github.com/go-sql-driver/mysql's DSN with a password.
var mysqlDSN = regexp.MustCompile(`^[^\s/:@]*:[^\s@]*@[a-z0-9]*\(`)

// filter returns the entries of environ ("KEY=value", as os.Environ gives)
// that p passes, in order. Entries without "=" are dropped.
func (p envPolicy) filter(environ []string) []string {
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
		} else if IsSecret(k) || hasURLPassword(kv[len(k)+1:]) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// environ is the environment a child gets: explicit (non-nil) wins as
// written; otherwise the caller's, filtered. extra entries (a private
// TMPDIR) are added unless the environment already names them.
func environ(p envPolicy, explicit, caller []string, extra ...string) []string {
	var env []string
	if explicit != nil {
		env = slices.Clone(explicit)
	} else {
		env = p.filter(caller)
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
