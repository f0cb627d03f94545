package sim

import (
	"testing"

	"github.com/procage-go/procage/profile/sbpl"
)

// peerCase is the shape of another project's Seatbelt profile, written
// here as a minimal profile of our own, with the outcomes that project's
// macOS tests (or, where it has none, its profile's comments) state.
type peerCase struct {
	name    string
	source  string // the peer's file and test
	profile string
	checks  []peerCheck
	// under selects the readings of Seatbelt the peer's evidence
	// constrains: its outcomes must hold under each. nil means all.
	under func(Variant) bool
	// discriminates: some variant outside under decides a check
	// otherwise, so the peer's evidence rules it out.
	discriminates bool
}

type peerCheck struct {
	access Access
	want   bool
}

func fileAccess(op, path string) Access { return Access{Op: op, Path: path, VnodeType: "REGULAR-FILE"} }

var peerCases = []peerCase{
	{
		name: "Homebrew: filtered write allows before unfiltered denies",
		source: "Homebrew/brew Library/Homebrew/extend/os/mac/sandbox.rb (SEATBELT_ERB); " +
			`Library/Homebrew/test/sandbox_spec.rb "#allow_write", "allows chmod on a path allowed to write", ` +
			`"allows chmod 4000 on a path allowed to write", "formula does a chmod to opt"`,
		profile: `(version 1)
(debug deny)
(allow file-write* (subpath "/private/tmp/t"))
(allow file-write-setugid (subpath "/private/tmp/t"))
(allow file-write-mode (subpath "/private/tmp/t"))
(deny file-write*)
(deny file-write-setugid)
(deny file-write-mode)
(allow default)`,
		checks: []peerCheck{
			{fileAccess("file-write-create", "/private/tmp/t/foo"), true},
			{fileAccess("file-write-mode", "/private/tmp/t/foo"), true},
			{fileAccess("file-write-setugid", "/private/tmp/t/foo"), true},
			{fileAccess("file-write-mode", "/opt/homebrew"), false},
			{fileAccess("file-write-setugid", "/opt/homebrew"), false},
			{fileAccess("file-write-data", "/Users/me/x"), false},
		},
		// Homebrew's CI runs these on macOS: an unfiltered rule does not
		// override filtered ones placed before it.
		under:         func(v Variant) bool { return v.Unfiltered != UnfilteredLast },
		discriminates: true,
	},
	{
		name: "Codex: writable root with .git excluded by require-not",
		source: "openai/codex codex-rs/core/src/seatbelt.rs (writable roots as require-all/require-not); " +
			"codex-rs/core/tests/suite/seatbelt.rs if_git_repo_is_writable_root_then_dot_git_folder_is_read_only",
		profile: `(version 1)
(deny default)
(allow file-read*)
(allow file-write* (require-all (subpath "/private/tmp/p/repo") (require-not (subpath "/private/tmp/p/repo/.git"))))`,
		checks: []peerCheck{
			{fileAccess("file-write-create", "/private/tmp/p/repo/repo_file.txt"), true},
			{fileAccess("file-write-create", "/private/tmp/p/repo/.git/dot_git_file.txt"), false},
			{fileAccess("file-write-create", "/private/tmp/p/outside.txt"), false},
		},
	},
	{
		name: "Nix: setugid denied before a build-tree file* allow",
		source: "NixOS/nix src/libstore/unix/build/sandbox-defaults.sb: (deny file-write-setugid) \"since that would " +
			"allow breaking build user isolation\", before (allow file* ... (subpath (param \"_NIX_BUILD_TOP\"))); " +
			"a comment of intent, no test measures it",
		profile: `(version 1)
(deny default)
(deny file-write-setugid)
(allow file* process-exec (subpath (param "_NIX_BUILD_TOP")))`,
		checks: []peerCheck{
			{Access{Op: "file-write-setugid", Path: "/private/tmp/nix-build-1/out/bin/x", Params: map[string]string{"_NIX_BUILD_TOP": "/private/tmp/nix-build-1"}}, false},
			{Access{Op: "file-write-data", Path: "/private/tmp/nix-build-1/out/bin/x", Params: map[string]string{"_NIX_BUILD_TOP": "/private/tmp/nix-build-1"}}, true},
		},
		// Nix's intent needs a concrete unfiltered deny to beat a later
		// filtered wildcard allow: only the default reading gives it.
		// procage does not rely on this (its setugid deny is filtered and
		// last).
		under:         func(v Variant) bool { return v.Unfiltered == UnfilteredFallback && v.Specificity != SpecificityNone },
		discriminates: true,
	},
	{
		name: "Bazel: network denied, then localhost and Unix sockets reopened",
		source: "bazelbuild/bazel src/main/java/com/google/devtools/build/lib/sandbox/DarwinSandboxedSpawnRunner.java " +
			"(\"the *last* matching rule wins\"); src/test/shell/bazel/bazel_sandboxing_networking_test.sh " +
			"test_sandbox_block_network_access",
		profile: `(version 1)
(debug deny)
(allow default)
(deny network*)
(allow network-inbound (local ip "localhost:*"))
(allow network* (remote ip "localhost:*"))
(allow network* (remote unix-socket))`,
		checks: []peerCheck{
			{Access{Op: "network-outbound", Addr: "127.0.0.1:8080"}, true},
			{Access{Op: "network-outbound", Addr: "/private/tmp/test.x/socket"}, true},
			{Access{Op: "network-outbound", Addr: "93.184.216.34:80"}, false},
			{fileAccess("file-read-data", "/etc/hosts"), true},
		},
	},
	{
		name: "sandbox-runtime: git hooks and config denied inside an allowed write path",
		source: "anthropic-experimental/sandbox-runtime src/sandbox/macos-sandbox-utils.ts (mandatory denies after " +
			"the write allow-list); test/sandbox/mandatory-deny-paths.test.ts",
		profile: `(version 1)
(deny default)
(allow file-read*)
(allow file-write* (subpath "/private/tmp/w"))
(deny file-write* (literal "/private/tmp/w/.git/config") (subpath "/private/tmp/w/.git/hooks"))`,
		checks: []peerCheck{
			{fileAccess("file-write-data", "/private/tmp/w/.git/hooks/pre-commit"), false},
			{fileAccess("file-write-data", "/private/tmp/w/.git/config"), false},
			{fileAccess("file-write-data", "/private/tmp/w/src/main.go"), true},
		},
	},
	{
		name: "agent-safehouse: ~/.ssh denied, known_hosts reopened",
		source: "eugene1g/agent-safehouse profiles/55-integrations-optional/ssh.sb; tests/policy/integrations/ssh.bats " +
			`"[EXECUTION] ssh private keys remain denied with and without enable=ssh", ` +
			`"[EXECUTION] ssh-keygen metadata reads work by default while ssh client execution requires enable=ssh"`,
		profile: `(version 1)
(deny default)
(deny file-read* file-write* (subpath "/Users/u/.ssh"))
(allow file-read-metadata (literal "/Users/u/.ssh"))
(allow file-read* (literal "/Users/u/.ssh/known_hosts"))`,
		checks: []peerCheck{
			{fileAccess("file-read-data", "/Users/u/.ssh/id_test"), false},
			{fileAccess("file-read-data", "/Users/u/.ssh/known_hosts"), true},
			{Access{Op: "file-read-metadata", Path: "/Users/u/.ssh", VnodeType: "DIRECTORY"}, true},
		},
	},
}

// TestPeerConformance decides each peer's shape under the readings of
// Seatbelt its evidence constrains and expects the outcomes it states.
func TestPeerConformance(t *testing.T) {
	for _, c := range peerCases {
		t.Run(c.name, func(t *testing.T) {
			prof, err := sbpl.Parse(c.profile)
			if err != nil {
				t.Fatalf("%s: %v", c.source, err)
			}
			ruledOut := false
			for _, v := range Variants() {
				in := c.under == nil || c.under(v)
				for _, ck := range c.checks {
					d, err := v.Decide(prof, ck.access)
					if err != nil {
						t.Fatalf("variant %v: %s: %v", v, ck.access, err)
					}
					switch {
					case in && d.Allowed != ck.want:
						t.Errorf("variant %v: %s: %s, want allowed=%v (%s)", v, ck.access, d, ck.want, c.source)
					case !in && d.Allowed != ck.want:
						ruledOut = true
					}
				}
			}
			if ruledOut != c.discriminates {
				t.Errorf("some variant outside the constrained set decides otherwise: %v, want %v", ruledOut, c.discriminates)
			}
		})
	}
}
