package seatbelt

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

// unfilteredOK are the operations a hard-deny class denies everywhere.
var unfilteredOK = []string{"file-write-setugid", "lsopen", "appleevent-send", "job-creation", "iokit-open-user-client", "pseudo-tty"}

func TestHardDenyStructure(t *testing.T) {
	for _, c := range profile.Classes() {
		for _, home := range []string{"", testHome} {
			rules := hardDenyRules(c, home)
			if len(rules) == 0 {
				t.Errorf("class %s (home %q) has no rules", c, home)
			}
			for i, r := range rules {
				text, err := r.Text()
				if err != nil {
					t.Fatalf("%s rule %d: %v", c, i, err)
				}
				if err := r.Validate(); err != nil {
					t.Errorf("%s rule %d %s: %v", c, i, text, err)
				}
				if r.Effect != sbpl.Deny {
					t.Errorf("%s rule %d %s: a hard-deny class only denies", c, i, text)
				}
				if r.Comment == "" {
					t.Errorf("%s rule %d %s has no comment", c, i, text)
				}
				if len(r.Filters) == 0 {
					for _, op := range r.Ops {
						if !slices.Contains(unfilteredOK, op) {
							t.Errorf("%s rule %d %s: unfiltered %s", c, i, text, op)
						}
					}
				}
				for _, p := range pathArgs(r.Filters) {
					if notKernelSpelling(p) {
						t.Errorf("%s rule %d %s: %q is not the kernel spelling", c, i, text, p)
					}
					if home == "" && strings.HasPrefix(p, "/Users") {
						t.Errorf("%s rule %d %s: names a home path without a home", c, i, text)
					}
				}
			}
		}
	}
}

// Without a home, a class emits exactly its home-independent rules, which
// are also part of its rules with a home.
func TestHardDenyHomeIndependent(t *testing.T) {
	for _, c := range profile.Classes() {
		without := hardDenyRules(c, "")
		with := hardDenyRules(c, testHome)
		for _, r := range without {
			found := slices.ContainsFunc(with, func(s sbpl.Rule) bool { return cmp.Equal(r, s) })
			if !found {
				text, _ := r.Text()
				t.Errorf("class %s: home-independent rule %s missing when a home is given", c, text)
			}
		}
		if len(with) <= len(without) && c != profile.ProcessAccess {
			t.Errorf("class %s: a home adds no rule (%d with, %d without)", c, len(with), len(without))
		}
	}
}

// A home of "/" does not produce "//" paths.
func TestHardDenyRootHome(t *testing.T) {
	for _, c := range profile.Classes() {
		for _, r := range hardDenyRules(c, "/") {
			for _, p := range pathArgs(r.Filters) {
				if strings.Contains(p, "//") {
					t.Errorf("class %s with home /: path %q", c, p)
				}
			}
		}
	}
}

// broadPolicy grants everything a caller might plausibly grant over the
// home directory, naming concrete operations too, so the hard-deny classes
// must beat both wildcard and specific allows.
func broadPolicy(t testing.TB, opts ...profile.Option) profile.Policy {
	t.Helper()
	base := []profile.Option{
		profile.ReadWrite(testHome), profile.Exec(testHome + "/bin"), profile.Network(profile.NetworkOn), profile.Fork(),
		profile.UnixSocket("/private/var/run/docker.sock"),
		profile.MachLookup("com.apple.SecurityServer"),
		profile.AcceptBroad(profile.BroadMachLookup),
		profile.Seatbelt(`(allow file-read-data file-read-metadata file-write-data file-write-create file-write-unlink file-link (subpath "/Users/alice"))
(allow process-info-pidinfo process-info-listpids signal mach-task-name mach-priv-task-port)
(allow sysctl-read)
(allow mach-lookup (global-name-prefix "com.apple."))
(allow network-outbound (remote unix-socket (subpath "/Users/alice")))`),
	}
	return mustNew(t, append(base, opts...)...)
}

// The specificity property (agent-safehouse ssh.bats, fence macos.go): after Lower, every hard-deny rule
// names each concrete operation an allow in the profile names and one of
// the rule's wildcards covers.
func TestHardDenySpecificity(t *testing.T) {
	plan := mustLower(t, broadPolicy(t), profile.Env{Home: testHome})
	var allowed []string
	for _, r := range plan.Profile.Rules {
		if r.Effect != sbpl.Allow {
			continue
		}
		for _, op := range r.Ops {
			if !sbpl.IsWildcard(op) && !slices.Contains(allowed, op) {
				allowed = append(allowed, op)
			}
		}
	}
	checked := 0
	for _, r := range plan.Profile.Rules {
		if r.Layer != LayerHardDeny {
			continue
		}
		for _, w := range r.Ops {
			if !sbpl.IsWildcard(w) {
				continue
			}
			for _, a := range allowed {
				if sbpl.Covers(w, a) {
					checked++
					if !slices.Contains(r.Ops, a) {
						text, _ := r.Text()
						t.Errorf("hard-deny %s names %s but not %s, which an allow names", text, w, a)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no hard-deny wildcard covered an allowed concrete operation; the test checks nothing")
	}
}

// The regexes say what the threat model means, in any letter case, without
// relying on the engine to fold case. (Go's engine stands in for
// Seatbelt's here: this checks the patterns, not Seatbelt.)
func TestHardDenyRegexes(t *testing.T) {
	git := profile.GitRegexes()
	cases := []struct {
		name    string
		re      string
		match   []string
		noMatch []string
	}{
		{"any .git", git.Any,
			[]string{"/w/r/.git", "/w/r/.GIT", "/w/r/.git/hooks/pre-commit", "/w/r/.Git/Config", "/w/r/sub/.git"},
			[]string{"/w/r/.gitignore", "/w/r/x.git", "/w/r/x.git/config", "/w/r/.github/hooks/a", "/w/r/git/config"}},
		{"git data", git.Data,
			[]string{"/w/r/.git/objects/ab/cd", "/w/r/.git/OBJECTS/ab/cd", "/w/r/.git/index", "/w/r/.git/index.lock",
				"/w/r/.git/refs/heads/main.lock", "/w/r/.git/logs/HEAD", "/w/r/.git/HEAD", "/w/r/.git/ORIG_HEAD",
				"/w/r/.git/modules/sub/objects/x", "/w/r/.git/worktrees/wt/index", "/w/r/.git/packed-refs", "/w/r/.git/lfs/objects/x"},
			[]string{"/w/r/.git", "/w/r/.git/config", "/w/r/.git/config.lock", "/w/r/.git/commondir", "/w/r/.git/hooks/pre-commit",
				"/w/r/.git/modules/sub/config", "/w/r/.git/modules/sub/hooks/x", "/w/r/.git/worktrees/wt/commondir",
				"/w/r/.git/worktrees/wt/gitdir", "/w/r/.git/info/attributes", "/w/r/.git/rebase-merge/git-rebase-todo",
				"/w/r/.git/modules/objects/config", "/w/r/.git/modules/a/modules/b/objects/x", "/w/r/.git/indexx",
				"/w/r/.git/hooks/objects"}},
		{"a bare repository's HEAD", git.Head,
			[]string{"/w/r/HEAD", "/w/r/sub/head", "/w/r/x.git/HEAD", "/w/r/.git/HEAD"},
			[]string{"/w/r/AHEAD", "/w/r/HEAD.md", "/w/r/HEAD/x", "/w/r/ORIG_HEAD", "/w/r/headers"}},
		{"zsh completion dump", prefixRegex(testHome+"/.zcompdump", false),
			[]string{testHome + "/.zcompdump", testHome + "/.zcompdump-mac-5.9", testHome + "/.zcompdump.zwc", "/users/ALICE/.ZCOMPDUMP"},
			[]string{testHome + "/.zcompdump/x", testHome + "/x/.zcompdump", "/x" + testHome + "/.zcompdump"}},
		{"a git directory's payload", git.Payload,
			[]string{"/w/r/.git/config", "/w/r/.git/refs/x/config", "/w/r/.git/refs/x/COMMONDIR", "/w/r/.git/logs/config.worktree",
				"/w/r/.git/objects/t/hooks", "/w/r/.git/objects/t/hooks/pre-commit", "/w/r/.GIT/Hooks/x"},
			[]string{"/w/r/config", "/w/r/hooks/x", "/w/r/.git/refs/heads/configure", "/w/r/.git/refs/heads/hook", "/w/r/.git/refs/heads/myhooks",
				"/w/r/.git/refs/heads/config.lock2", "/w/r/.github/hooks/x"}},
		{"python local user site", prefixRegex(testHome+"/.local/lib/python", true),
			[]string{testHome + "/.local/lib/python3.12", testHome + "/.local/lib/python3.12/site-packages/x.pth", "/users/ALICE/.local/lib/Python3/x"},
			[]string{testHome + "/.local/lib/node/x", testHome + "/.local/libpython3", "/x" + testHome + "/.local/lib/python3/x"}},
		{"colima", colimaSocketRegex(testHome),
			[]string{testHome + "/.colima/default/docker.sock", "/users/ALICE/.colima/work/docker.sock"},
			[]string{testHome + "/.colima/default/containerd.sock", testHome + "/.colima/a/b/docker.sock", "/x" + testHome + "/.colima/a/docker.sock"}},
	}
	for _, tc := range cases {
		re, err := regexp.Compile(tc.re)
		if err != nil {
			t.Fatalf("%s: %q does not compile: %v", tc.name, tc.re, err)
		}
		if strings.Contains(tc.re, "(?i)") {
			t.Errorf("%s: %q uses (?i), which Seatbelt rejects", tc.name, tc.re)
		}
		for _, p := range tc.match {
			if !re.MatchString(p) {
				t.Errorf("%s: %q does not match %s", tc.name, tc.re, p)
			}
		}
		for _, p := range tc.noMatch {
			if re.MatchString(p) {
				t.Errorf("%s: %q matches %s", tc.name, tc.re, p)
			}
		}
	}
}

// Move-blocking covers every directory between / and each protected path
// in the home directory, and nothing under the protected paths.
func TestMoveBlock(t *testing.T) {
	rules := moveBlock([]string{testHome + "/.config/gcloud", testHome + "/.ssh"}, "x")
	if len(rules) != 1 {
		t.Fatalf("moveBlock gave %d rules, want 1", len(rules))
	}
	want := []string{"/Users", testHome, testHome + "/.config"}
	if diff := cmp.Diff(want, pathArgs(rules[0].Filters)); diff != "" {
		t.Errorf("moveBlock paths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"file-write-create", "file-write-unlink"}, rules[0].Ops); diff != "" {
		t.Errorf("moveBlock ops (-want +got):\n%s", diff)
	}
	if got := moveBlock([]string{"/x"}, "x"); got != nil {
		t.Errorf("moveBlock of a top-level path = %v, want no rule (an unfiltered deny would deny every unlink)", got)
	}
}

// The policy model refuses a filtered Seatbelt-layer allow of exactly the
// operations some class in force denies here without a filter
// (profile.ErrClassAllow): the list it keeps must follow these rules.
func TestClassAllowFollowsUnfilteredDenies(t *testing.T) {
	unfiltered := map[string]profile.Class{}
	var filtered []string
	for _, c := range profile.Classes() {
		for _, home := range []string{"", testHome} {
			for _, r := range hardDenyRules(c, home) {
				for _, op := range r.Ops {
					if len(r.Filters) == 0 {
						unfiltered[op] = c
					} else {
						filtered = append(filtered, op)
					}
				}
			}
		}
	}
	if len(unfiltered) == 0 {
		t.Fatal("no class denies an operation without a filter; the test checks nothing")
	}
	allow := func(op string) string { return "(allow " + op + ` (require-not (literal "/x")))` }
	for op, c := range unfiltered {
		if _, err := profile.New(profile.BaseV1, profile.Seatbelt(allow(op))); !errors.Is(err, profile.ErrClassAllow) {
			t.Errorf("class %s denies %s without a filter, but a filtered allow of it gives %v, want ErrClassAllow", c, op, err)
		}
		if _, err := profile.New(profile.BaseV1, profile.Seatbelt(allow(op)), profile.Waive(c)); errors.Is(err, profile.ErrClassAllow) {
			t.Errorf("a filtered allow of %s with %s waived: %v", op, c, err)
		}
	}
	slices.Sort(filtered)
	for _, op := range slices.Compact(filtered) {
		if _, ok := unfiltered[op]; ok {
			continue
		}
		if _, err := profile.New(profile.BaseV1, profile.Seatbelt(allow(op)), profile.AcceptBroad(profile.BroadMachLookup)); errors.Is(err, profile.ErrClassAllow) {
			t.Errorf("every class denies %s with a filter, yet a filtered allow of it is refused: %v", op, err)
		}
	}
}
