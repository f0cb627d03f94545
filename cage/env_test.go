package cage_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/cage"
)

func TestIsSecret(t *testing.T) {
	tests := map[string]bool{
		"GITHUB_TOKEN": true, "DB_PASSWORD": true, "APP_SECRET": true, "OPENAI_API_KEY": true,
		"AWS_REGION": true, "AWS_ACCESS_KEY_ID": true, "DYLD_INSERT_LIBRARIES": true,
		"SSH_AUTH_SOCK": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true,
		"PATH": false, "HOME": false, "TOKEN": false, "TOKENIZER": false, "MY_TOKEN_FILE": false,
		"LD_RUN_PATH": false, "XAWS_X": false, "api_key": false,
		"github_token": true, "npm_api_key": true, "aws_secret_access_key": true, "ssh_auth_sock": true,
	}
	for name, want := range tests {
		if got := cage.IsSecret(name); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEnvironment(t *testing.T) {
	caller := []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "GITHUB_TOKEN=ghp_x", "AWS_PROFILE=prod",
		"DYLD_INSERT_LIBRARIES=/x.dylib", "SSH_AUTH_SOCK=/tmp/agent", "LANG=C", "malformed", "=nokey"}
	tests := []struct {
		name     string
		policy   cage.EnvPolicy
		explicit []string
		extra    []string
		want     []string
	}{
		{name: "default drops secrets", policy: cage.EnvDropSecrets,
			want: []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "LANG=C"}},
		{name: "zero policy is the default", policy: cage.EnvPolicy{},
			want: []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "LANG=C"}},
		{name: "allowlist takes exactly what it names", policy: cage.EnvAllowlist("PATH", "GITHUB_TOKEN", "MISSING"),
			want: []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x"}},
		{name: "empty allowlist passes nothing", policy: cage.EnvAllowlist(), want: []string{}},
		{name: "explicit wins, even a secret", policy: cage.EnvDropSecrets, explicit: []string{"GITHUB_TOKEN=mine", "A=1"},
			want: []string{"GITHUB_TOKEN=mine", "A=1"}},
		{name: "explicit empty passes nothing", policy: cage.EnvDropSecrets, explicit: []string{}, want: []string{}},
		{name: "private TMPDIR added", policy: cage.EnvDropSecrets, extra: []string{"TMPDIR=/private/var/run1"},
			want: []string{"PATH=/usr/bin:/bin", "HOME=/Users/me", "LANG=C", "TMPDIR=/private/var/run1"}},
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
