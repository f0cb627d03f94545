package cage_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/cage"
)

func TestIsSecret(t *testing.T) {
	tests := map[string]bool{
		"GITHUB_TOKEN": true, "DB_PASSWORD": true, "APP_SECRET": true, "OPENAI_API_KEY": true,
		"AWS_REGION": true, "AWS_ACCESS_KEY_ID": true, "DYLD_INSERT_LIBRARIES": true,
		"SSH_AUTH_SOCK": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
		"github_token": true, "npm_api_key": true, "aws_secret_access_key": true, "ssh_auth_sock": true,
		// What twelve-factor apps and common tools use (the list).
		"PASSWORD": true, "API_KEY": true, "api_key": true, "PGPASSWORD": true, "MYSQL_PWD": true,
		"PRIVATE_KEY": true, "DB_PASS": true, "STRIPE_SK": true, "SLACK_WEBHOOK_URL": true, "TOKEN": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "AZURE_CLIENT_SECRET": true, "NPM_CONFIG__AUTH": true,
		"DISCORD_WEBHOOK": true, "REDIS_PASSWD": true, "SECRET_KEY_BASE": true, "JWT_SIGNING_KEY": true,
		// Not secrets.
		"PATH": false, "HOME": false, "PWD": false, "OLDPWD": false, "TOKENIZERS_PARALLELISM": false,
		"TOKENIZER": false, "MY_TOKEN_FILE": false, "XAWS_X": false, "GPG_KEY": false,
		"STRIPE_PUBLISHABLE_KEY": false, "APP_PUBLIC_KEY": false, "KEYBOARD": false, "DISPLAY": false,
		"SSH_CONNECTION": false, "TERM": false, "LANG": false,
	}
	for name, want := range tests {
		if got := cage.IsSecret(name); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzIsSecret: the drop list ignores case, a name made to end in a
// secret suffix is dropped, and Filter never passes a dropped name or a
// URL with a password.
func FuzzIsSecret(f *testing.F) {
	for _, s := range []string{"GITHUB_TOKEN", "PATH", "gpg_key", "X_PUBLIC_KEY", "ld_x", "ŧoken", "postgres://u:p@h/db"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		// Where lower-casing keeps the upper-case spelling (not so for
		// some runes), the verdict must not change.
		lower, upper := strings.ToLower(name), strings.ToUpper(name)
		if same := strings.ToUpper(lower); same == upper && (cage.IsSecret(lower) != cage.IsSecret(name) || cage.IsSecret(upper) != cage.IsSecret(name)) {
			t.Errorf("IsSecret(%q) depends on case", name)
		}
		if !cage.IsSecret(name+"_TOKEN") || !cage.IsSecret(name+"_PASSWORD") {
			t.Errorf("%q with a secret suffix passes", name)
		}
		if strings.ContainsAny(name, "=\x00") || name == "" {
			return
		}
		kv := name + "=" + value
		got := cage.EnvDropSecrets.Filter([]string{kv, "URL=x://u:pw@" + value})
		for _, e := range got {
			if e == kv && cage.IsSecret(name) {
				t.Errorf("Filter passed %q", e)
			}
			if strings.HasPrefix(e, "URL=") {
				t.Errorf("Filter passed a URL with a password: %q", e)
			}
		}
	})
}

func TestEnvironment(t *testing.T) {
	caller := []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "GITHUB_TOKEN=ghp_x", "AWS_PROFILE=prod",
		"DATABASE_URL=postgres://app:pw@db:5432/app", "CACHE_URL=redis://cache:6379/0", "AMQP=amqp://guest:guest@mq",
		"DYLD_INSERT_LIBRARIES=/x.dylib", "SSH_AUTH_SOCK=/tmp/agent", "LANG=C", "malformed", "=nokey"}
	tests := []struct {
		name     string
		policy   cage.EnvPolicy
		explicit []string
		extra    []string
		want     []string
	}{
		{name: "default drops secrets", policy: cage.EnvDropSecrets,
			want: []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "CACHE_URL=redis://cache:6379/0", "LANG=C"}},
		{name: "zero policy is the default", policy: cage.EnvPolicy{},
			want: []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "CACHE_URL=redis://cache:6379/0", "LANG=C"}},
		{name: "allowlist takes exactly what it names", policy: cage.EnvAllowlist("PATH", "GITHUB_TOKEN", "MISSING"),
			want: []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x"}},
		{name: "empty allowlist passes nothing", policy: cage.EnvAllowlist(), want: []string{}},
		{name: "explicit wins, even a secret", policy: cage.EnvDropSecrets, explicit: []string{"GITHUB_TOKEN=mine", "A=1"},
			want: []string{"GITHUB_TOKEN=mine", "A=1"}},
		{name: "explicit empty passes nothing", policy: cage.EnvDropSecrets, explicit: []string{}, want: []string{}},
		{name: "private TMPDIR added", policy: cage.EnvDropSecrets, extra: []string{"TMPDIR=/private/var/run1"},
			want: []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "CACHE_URL=redis://cache:6379/0", "LANG=C", "TMPDIR=/private/var/run1"}},
		{name: "private TMPDIR replaces the caller's", policy: cage.EnvAllowlist("TMPDIR"), extra: []string{"TMPDIR=/private/var/run1"},
			want: []string{"TMPDIR=/private/var/run1"}},
		{name: "explicit TMPDIR wins over the private one", policy: cage.EnvDropSecrets, explicit: []string{"TMPDIR=/mine"},
			extra: []string{"TMPDIR=/private/var/run1"}, want: []string{"TMPDIR=/mine"}},
	}
	callerWithTmp := append(caller, "TMPDIR=/var/folders/x/T")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := caller
			if tt.name == "private TMPDIR replaces the caller's" {
				in = callerWithTmp
			}
			got := cage.Environ(tt.policy, tt.explicit, in, tt.extra...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvPolicyString(t *testing.T) {
	if got := cage.EnvAllowlist("B", "A", "A").String(); got != "allowlist[A B]" {
		t.Errorf("String() = %q", got)
	}
	if got := cage.EnvDropSecrets.String(); got != "drop-secrets" {
		t.Errorf("String() = %q", got)
	}
}
