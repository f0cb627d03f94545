package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// macHome is the home directory a macOS plan protects: the simulated
// /Users/<name> off macOS, the real one on a Mac.
func macHome(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "darwin" {
		return "/Users/" + macUserName()
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	home, err = filepath.EvalSymlinks(home)
	if err != nil {
		t.Skip(err)
	}
	return home
}

// forbiddenPrefixes are package prefixes a CLI message must not show.
var forbiddenPrefixes = []string{"cage: ", "profile: ", "seatbelt: ", "sim: ", "pathresolve: ", "sbpl: ", "json: "}

func TestPlan(t *testing.T) {
	code, out, errs := runCLI(t, "plan", "--backend", "macos", "--read", "/usr", "--network", "loopback", "--port", "5432")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "\n(version 1)\n") || !strings.Contains(out, "(deny default)") {
		t.Errorf("plan lacks (version 1) and (deny default):\n%s", out)
	}
	if !strings.Contains(out, `(allow file-read* (subpath "/usr"))`) || !strings.Contains(out, `(remote ip "localhost:5432")`) {
		t.Errorf("plan lacks the policy's rules:\n%s", out)
	}
	if errs != "" {
		t.Errorf("stderr %q, want nothing", errs)
	}
}

// TestPlanShowsRewrite: a policy path through a symbolic link is shown
// rewritten (/tmp is a link to private/tmp on macOS, simulated elsewhere),
// and the link itself gets a metadata rule. A trailing slash is accepted.
func TestPlanShowsRewrite(t *testing.T) {
	for _, arg := range []string{"/tmp/procage-x/sub", "/tmp/procage-x/sub/"} {
		code, out, errs := runCLI(t, "plan", "--backend", "macos", "--read", arg)
		if code != 0 {
			t.Fatalf("exit %d, stderr %s", code, errs)
		}
		for _, want := range []string{
			"; rewrite: /tmp/procage-x/sub -> /private/tmp/procage-x/sub (symlink /tmp)",
			`(allow file-read* (subpath "/private/tmp/procage-x/sub"))`,
			`(literal "/tmp")`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("plan --read %s lacks %s:\n%s", arg, want, out)
			}
		}
	}

	code, out, _ := runCLI(t, "plan", "--backend", "macos", "--read", "/tmp/procage-x", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	var got struct {
		Backend, Home string
		Policy        map[string]any
		Rewrites      []struct{ From, To, Reason, Via string }
		Rules         int
		Profile       string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	wantRewrites := []struct{ From, To, Reason, Via string }{{"/tmp/procage-x", "/private/tmp/procage-x", "symlink", "/tmp"}}
	if diff := cmp.Diff(wantRewrites, got.Rewrites); diff != "" {
		t.Errorf("rewrites (-want +got):\n%s", diff)
	}
	if got.Backend != "macos" || got.Home != macHome(t) || got.Policy["version"] != float64(1) || got.Rules == 0 || !strings.HasPrefix(got.Profile, "(version 1)") {
		t.Errorf("json = %+v", got)
	}
}

// TestBackend: --backend macos previews a Mac's plan from any OS; off
// macOS its paths resolve against a simulated Mac with firmlinks and
// /Users/<name>.
func TestBackend(t *testing.T) {
	home := macHome(t)
	code, out, errs := runCLI(t, "explain", "--backend", "macos", "--write", home, "file-read-data", home+"/.ssh/id_rsa")
	if code != 1 || !strings.Contains(out, "(hard-deny)") || !strings.Contains(out, home+"/.ssh") {
		t.Errorf("explain of ~/.ssh/id_rsa: exit %d, %q %q; want 1, denied by the hard-deny rule on %s/.ssh", code, out, errs, home)
	}
	if runtime.GOOS != "darwin" {
		code, out, errs := runCLI(t, "plan", "--backend", "macos", "--read", "/System/Volumes/Data/Users/x")
		if code != 0 || !strings.Contains(out, "; paths resolved against a simulated macOS file system (home "+home+")") ||
			!strings.Contains(out, "; rewrite: /System/Volumes/Data/Users/x -> /Users/x (firmlink /Users)") {
			t.Errorf("simulated firmlink: exit %d, %s %s", code, out, errs)
		}
	}
	code, out, errs = runCLI(t, "plan", "--backend", "bsd")
	if want := "procage plan: --backend \"bsd\": want macos or linux\n"; code != exitFailure || out != "" || errs != want {
		t.Errorf("--backend bsd: exit %d, stdout %q, stderr %q; want 125, nothing, %q", code, out, errs, want)
	}
	// The Linux plan (Landlock and seccomp) from any OS, and by default on
	// Linux; explain decides with it the same way.
	args := [][]string{{"plan", "--backend", "linux", "--read", "/usr"}}
	if runtime.GOOS == "linux" {
		args = append(args, []string{"plan", "--read", "/usr"})
	}
	for _, a := range args {
		code, out, errs := runCLI(t, a...)
		if code != 0 || !strings.Contains(out, "Linux") || strings.Contains(out, "(version 1)") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want the Linux plan", a, code, out, errs)
		}
	}
	args = [][]string{{"explain", "--backend", "linux", "--read", "/usr", "file-read-data", "/usr/x"}}
	if runtime.GOOS == "linux" {
		args = append(args, []string{"explain", "--read", "/usr", "read", "/usr/x"})
	}
	for _, a := range args {
		code, out, errs = runCLI(t, a...)
		if want := "allowed: read_file on /usr/x by Landlock rule (policy) /usr: read_file|read_dir\n"; code != 0 || out != want || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0, %q", a, code, out, errs, want)
		}
	}
	code, out, errs = runCLI(t, "explain", "--backend", "linux", "--tier", "t2", "write", "/usr/x")
	if want := "denied (EACCES): no Landlock rule grants write_file on /usr/x; no rule covers /usr/x or a directory above it\n"; code != 1 || errs != "" || out != want {
		t.Errorf("explain --backend linux --tier t2 write: exit %d, stdout %q, stderr %q; want 1, %q", code, out, errs, want)
	}
	// At T1 the read-only mount answers first.
	code, out, errs = runCLI(t, "explain", "--backend", "linux", "--tier", "t1", "write", "/usr/x")
	if want := "denied (EROFS): no Landlock rule grants write_file on /usr/x; no rule covers /usr/x or a directory above it; at tier T1 the path is on a read-only mount, whose EROFS comes before Landlock's EACCES\n"; code != 1 || errs != "" || out != want {
		t.Errorf("explain --backend linux --tier t1 write: exit %d, stdout %q, stderr %q; want 1, %q", code, out, errs, want)
	}
}

func TestPlanPolicyFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(f, []byte(`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"/usr"}],"fork":true}`), 0o644)
	code, out, errs := runCLI(t, "plan", "--backend", "macos", "--policy", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "; parameter bound per spawn: PROCAGE_RUN_MARKER") || !strings.Contains(out, "(allow process-fork)") {
		t.Errorf("forking policy file not lowered as such:\n%s", out)
	}
}

// TestBadInput: bad input is exit 125, one line on stderr naming the user's
// input without package prefixes, and nothing on stdout.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"version\":1,\n \"base\":\"v1\",\n \"colour\":1}"), 0o644)
	dup := filepath.Join(dir, "dup.json")
	os.WriteFile(dup, []byte(`{"version":1,"base":"v1","fork":true,"fork":false}`), 0o644)
	rel := filepath.Join(dir, "rel.json")
	os.WriteFile(rel, []byte("{\n  \"version\": 1,\n  \"base\": \"v1\",\n  \"fs\": [{\"access\": [\"read\"], \"subpath\": \"usr\"}]\n}\n"), 0o644)
	arr := filepath.Join(dir, "arr.json")
	os.WriteFile(arr, []byte(`[]`), 0o644)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	port0 := filepath.Join(dir, "port0.json")
	os.WriteFile(port0, []byte(`{"version":1,"base":"v1","network":{"mode":"loopback","ports":[80,0]}}`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--read", "my docs/../x"}, `procage plan: --read 'my docs/../x' (` + wd + `/my docs/../x): path is not normalised`},
		{[]string{"plan", "--exec", "/it's/../x"}, `procage plan: --exec '/it'\''s/../x': path is not normalised`},
		{[]string{"plan", "--read", "/a\nb/../c"}, `procage plan: --read $'/a\x0ab/../c': path contains a control character`},
		{[]string{"plan", "--read", "/a b/../c"}, `procage plan: --read '/a b/../c': path is not normalised`},
		{[]string{"plan", "--write", "/a/../b"}, `procage plan: --write /a/../b: path is not normalised`},
		{[]string{"plan", "--network", "wifi"}, `procage plan: --network "wifi": want off, loopback or on`},
		{[]string{"plan", "--network", "loopback", "--port", "70000"}, "procage plan: --network loopback --port 70000: port must be 1..65535"},
		{[]string{"plan", "--network", "off", "--port", "80"}, "procage plan: --network off --port 80: ports apply to loopback and on modes only"},
		{[]string{"plan", "--network", "loopback"}, "procage plan: --network loopback: name each localhost port it may use with --port N (or allow every port: --port any)"},
		{[]string{"plan", "--network", "loopback", "--listen-any", "--port", "80"}, "procage plan: --listen-any: "},
		{[]string{"plan", "--port", "x"}, `procage plan: --port "x": not a number or any`},
		{[]string{"plan", "--network", "loopback", "--port", "0"}, `procage plan: --port 0: not a port; use --port any for every port`},
		{[]string{"plan", "--network", "loopback", "--port", "-1"}, `procage plan: --port "-1": not a port (1..65535) or any`},
		{[]string{"plan", "--policy", port0}, "procage plan: " + port0 + ":1:67: network.ports[1] \"0\": port 0 is not a port"},
		{[]string{"plan", "--waive", "all"}, `procage plan: --waive "all": unknown hard-deny class`},
		{[]string{"plan", "--seatbelt", "(allow file-raed*)"}, `unknown operation "file-raed*"`},
		{[]string{"plan", "--mach", "a b"}, `procage plan: --mach "a b": a Mach service name is non-empty`},
		{[]string{"plan", "--limit", "0"}, "procage plan: --limit 0: must be at least 1"},
		{[]string{"plan", "--backend", "macos", "--limit", "3"}, "procage plan: --limit 3: the profile has"},
		{[]string{"plan", "--policy", bad}, "procage plan: " + bad + ":3:2: colour: unknown field"},
		{[]string{"plan", "--policy", dup}, "procage plan: " + dup + ":1:38: fork: repeated key"},
		{[]string{"plan", "--policy", rel}, "procage plan: " + rel + ":4:42: fs[0].subpath \"usr\": path is not absolute"},
		{[]string{"plan", "--policy", arr}, "procage plan: " + arr + ":1:1: want an object, not array"},
		{[]string{"plan", "--policy", "/nonexistent.json"}, "procage plan: --policy /nonexistent.json: no such file or directory"},
		{[]string{"explain", "--backend", "macos", "frob", "/x"}, `procage explain: "frob": not a concrete Seatbelt operation`},
		{[]string{"explain", "--backend", "macos", "file-read-data", "x"}, `procage explain: file-read-data "x": want an absolute path`},
		{[]string{"explain", "--backend", "macos", "network-outbound", "example.com:80"}, `host must be an IP address or localhost`},
		{[]string{"explain", "--backend", "linux", "frob", "/x"}, `procage explain: "frob": want read, list, write, truncate, exec, create, mkdir, remove, rmdir, symlink, mkfifo, a Landlock right (read_file, make_reg, ...), connect, bind or a system call's name`},
		{[]string{"explain", "--backend", "linux", "file-read-data", "x"}, `procage explain: file-read-data "x": want an absolute path` + "\n"},
		{[]string{"explain", "--backend", "linux", "connect", "70000"}, `procage explain: connect "70000": want PORT or HOST:PORT, a port 1-65535`},
		{[]string{"explain", "--backend", "linux", "clone", "CLONE_NOPE"}, `procage explain: clone "CLONE_NOPE": argument 0: "CLONE_NOPE" is neither a number nor a known constant` + "\n"},
		{[]string{"explain", "--backend", "linux", "mach-lookup", "com.apple.x"}, `procage explain: "mach-lookup": a Seatbelt operation with no Linux counterpart (ask the macOS plan: --backend macos)` + "\n"},
		{[]string{"run", "--grant", "~bob/x", "--", "/bin/true"}, `procage run: --grant '~bob/x': only a leading ~ or ~/ is expanded (to $HOME); give the path in full`},
		{[]string{"run", "--grant-rw", "/a/../b", "--", "/bin/true"}, `procage run: --grant-rw /a/../b: path is not normalised`},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != exitFailure || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 125 and nothing", tt.args, code, out)
		}
		if !strings.Contains(errs, tt.want) {
			t.Errorf("%v: stderr %q, want it to mention %q", tt.args, errs, tt.want)
		}
		if strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: stderr is not one line: %q", tt.args, errs)
		}
		for _, p := range forbiddenPrefixes {
			if strings.Contains(errs, ": "+p) {
				t.Errorf("%v: stderr %q carries the prefix %q", tt.args, errs, p)
			}
		}
	}
}

// TestUsageErrors: a malformed command line is one line on stderr plus a
// pointer to --help, exit 125, nothing on stdout (so 'procage plan --bogus >
// profile.sb' writes no usage into the file).
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "procage: missing command; see 'procage --help'\n"},
		{[]string{"frob"}, "procage: unknown command \"frob\"; see 'procage --help'\n"},
		{[]string{"plan", "--bogus"}, "procage plan: unknown flag --bogus\nsee 'procage plan --help'\n"},
		{[]string{"plan", "--read"}, "procage plan: flag --read needs a value\nsee 'procage plan --help'\n"},
		{[]string{"plan", "--limit", "x"}, "procage plan: --limit \"x\": not a valid value\nsee 'procage plan --help'\n"},
		{[]string{"plan", "--fork=maybe"}, "procage plan: --fork=\"maybe\": want true or false\nsee 'procage plan --help'\n"},
		{[]string{"plan", "extra"}, "procage plan: unexpected argument \"extra\" (paths go after --read, --write or --exec)\nsee 'procage plan --help'\n"},
		{[]string{"plan", "--policy", "p.json", "--read", "/usr"}, "procage plan: --policy and --read: give the policy either as a file or as flags\nsee 'procage plan --help'\n"},
		{[]string{"explain"}, "procage explain: want OPERATION and ARGUMENT, e.g. explain --read /usr read /usr/lib/os-release\nsee 'procage explain --help'\n"},
		{[]string{"run", "--read", "/usr"}, "procage run: missing COMMAND (procage run [flags] -- COMMAND [ARG...])\nsee 'procage run --help'\n"},
		{[]string{"probe", "x"}, "procage probe: probe takes no arguments\nsee 'procage probe --help'\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != exitFailure || out != "" || errs != tt.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 125, nothing, %q", tt.args, code, out, errs, tt.want)
		}
	}
}

// TestHelp: help goes to stdout, once, with exit 0 and nothing on stderr.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"plan", "--help"}, {"plan", "-h"}, {"explain", "--help"}, {"run", "--help"}, {"probe", "--help"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || strings.Count(out, "Usage") != 1 || errs != "" {
			t.Errorf("%v: exit %d, %d usages on stdout, stderr %q; want 0, 1, nothing\n%s", args, code, strings.Count(out, "Usage"), errs, out)
		}
	}
	_, out, _ := runCLI(t, "plan", "-h")
	for _, flag := range []string{"-read", "-write", "-exec", "-network", "-port", "-listen-any", "-unix-socket", "-mach", "-fork", "-exec-target-only", "-waive", "-seatbelt", "-policy", "-json", "-limit", "-backend"} {
		if !strings.Contains(out, flag+" ") && !strings.Contains(out, flag+"\n") {
			t.Errorf("plan --help does not explain %s", flag)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, errs := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "procage ") || strings.Count(out, "\n") != 1 || errs != "" {
		t.Errorf("--version: exit %d, %q %q", code, out, errs)
	}
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "github.com/procage-go/procage", Version: v}, Settings: settings}, true
		}
	}
	tests := []struct {
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		{info("v0.4.1"), "v0.4.1"},
		{info("v0.4.2-0.20261201120000-abcdef123456"), "v0.4.2-0.20261201120000-abcdef123456"},
		{info("(devel)"), "(devel)"},
		{info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: "c1c8e75a0b1c2d3e4f"}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "(devel) c1c8e75a0b1c+dirty"},
		{info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: "c1c8e75"}), "(devel) c1c8e75"},
		{func() (*debug.BuildInfo, bool) { return nil, false }, "(unknown version: built without module information)"},
	}
	for _, tt := range tests {
		if got := version(tt.read); got != tt.want {
			t.Errorf("version = %q, want %q", got, tt.want)
		}
	}
}

// TestWarnings: one line on stderr for a rule the hard-deny classes
// override entirely and for write access to the home directory or /;
// nothing for ordinary rules.
func TestWarnings(t *testing.T) {
	home := macHome(t)
	tests := []struct {
		args []string
		want string // "" = no warning
	}{
		{[]string{"--read", home + "/.ssh"}, "warning: the hard-deny classes override the rule read subpath " + home + "/.ssh entirely"},
		{[]string{"--read", home + "/.ssh/"}, "warning: the hard-deny classes override the rule read subpath " + home + "/.ssh entirely"},
		{[]string{"--write", home + "/.aws/credentials"}, "override the rule read+write subpath " + home + "/.aws/credentials entirely"},
		{[]string{"--write", home}, "warning: write access to the home directory " + home + ":"},
		{[]string{"--write", "/"}, "warning: write access to /:"},
		{[]string{"--read", home}, ""},
		{[]string{"--read", "/"}, ""},
		{[]string{"--write", home + "/src"}, ""},
		{[]string{"--read", home + "/.ssh", "--waive", "secrets"}, ""},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, append([]string{"plan", "--backend", "macos"}, tt.args...)...)
		if code != 0 || !strings.Contains(out, "(version 1)") {
			t.Errorf("%v: exit %d, want the plan", tt.args, code)
		}
		if tt.want == "" {
			if errs != "" {
				t.Errorf("%v: stderr %q, want nothing", tt.args, errs)
			}
			continue
		}
		if !strings.HasPrefix(errs, "procage plan: ") || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line with %q", tt.args, errs, tt.want)
		}
	}
}

func TestExplain(t *testing.T) {
	home := macHome(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--read", "/usr", "file-read-data", "/usr/lib/x"}, 0, `allowed by rule`},
		{[]string{"--read", "/usr", "file-write-data", "/usr/lib/x"}, 1, `denied by default`},
		{[]string{"--write", home, "file-read-data", home + "/.ssh/id_rsa"}, 1, "(hard-deny)"},
		{[]string{"--write", home, "--waive", "secrets", "file-read-data", home + "/.ssh/id_rsa"}, 0, "(policy)"},
		{[]string{"--network", "loopback", "--port", "any", "network-outbound", "localhost:5432"}, 0, `(remote ip "localhost:*")`},
		{[]string{"--network", "loopback", "--port", "5432", "network-outbound", "localhost:5432"}, 0, `(remote ip "localhost:5432")`},
		{[]string{"--network", "loopback", "--port", "5432", "network-outbound", "localhost:9229"}, 1, "denied"},
		{[]string{"--network", "loopback", "--port", "any", "network-outbound", "93.184.216.34:443"}, 1, "denied"},
		{[]string{"--network", "on", "network-outbound", "93.184.216.34:443"}, 0, "allowed"},
		{[]string{"--network", "on", "network-outbound", "127.0.0.1:9229"}, 1, "denied"},
		{[]string{"sysctl-read", "kern.procargs2"}, 1, "(hard-deny)"},
		{[]string{"--exec-target-only", "process-exec", "/bin/ls"}, 1, "(exec-target-only)"},
		{[]string{"--read", "/tmp/x", "file-read-data", "/tmp/x/y"}, 0, "; /tmp/x/y is /private/tmp/x/y to the kernel\nallowed by rule"},
		{[]string{"frob", "/x"}, 125, "not a concrete Seatbelt operation"},
		{[]string{"file-read-data"}, 125, ""},
		{[]string{}, 125, "want OPERATION and ARGUMENT"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, append([]string{"explain", "--backend", "macos"}, tt.args...)...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("explain %v: exit %d, output %q %q; want exit %d mentioning %q", tt.args, code, out, errs, tt.code, tt.want)
		}
	}
}

func TestExplainJSON(t *testing.T) {
	code, out, errs := runCLI(t, "explain", "--backend", "macos", "--json", "--read", "/tmp/x", "file-write-data", "/tmp/x/y")
	if code != 1 {
		t.Fatalf("exit %d, stderr %q; want 1 (denied)", code, errs)
	}
	var got struct {
		Backend, Operation, Argument string
		Resolved                     []struct{ Path, Kernel string }
		Allowed, Default             bool
		Rule                         int
		Layer, Text, Decision        string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Backend != "macos" || got.Operation != "file-write-data" || got.Argument != "/tmp/x/y" || got.Allowed ||
		len(got.Resolved) != 1 || got.Resolved[0].Kernel != "/private/tmp/x/y" || !strings.HasPrefix(got.Decision, "denied") {
		t.Errorf("explain --json = %+v", got)
	}
	code, out, _ = runCLI(t, "explain", "--backend", "macos", "--json", "--read", "/tmp/x", "file-read-data", "/tmp/x/y")
	if code != 0 || !strings.Contains(out, `"allowed": true`) || !strings.Contains(out, `"layer": "policy"`) {
		t.Errorf("allowed access: exit %d\n%s", code, out)
	}
}

// TestRunTargetStatus: a command that cannot be found exits 127 and one
// that cannot be executed 126, as shells do, before any cage is involved,
// on every OS; nothing else runs.
func TestRunTargetStatus(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("#!/bin/sh\necho ran\n"), 0o644)
	tests := []struct {
		target string
		code   int
		want   string
	}{
		{filepath.Join(dir, "missing"), 127, "procage run: " + filepath.Join(dir, "missing") + ": no such file\n"},
		{"procage-no-such-command", 127, "procage run: procage-no-such-command: command not found\n"},
		{plain, 126, "procage run: " + plain + ": not executable\n"},
		{dir, 126, "procage run: " + dir + ": is a directory\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, "run", "--read", "/usr", "--", tt.target)
		if code != tt.code || out != "" || !strings.HasPrefix(errs, tt.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("run %s: exit %d, stdout %q, stderr %q; want %d, nothing, %q", tt.target, code, out, errs, tt.code, tt.want)
		}
	}
}

// TestExplainHelp: explain --help documents --profile and the Linux words.
func TestExplainHelp(t *testing.T) {
	code, out, _ := runCLI(t, "explain", "--help")
	for _, want := range []string{"-profile FILE", "explain --profile FILE [--param NAME=VALUE]", "connect PORT|HOST:PORT|PATH", "SYSCALL [ARG,ARG...]", "--accept-gap NAME", "1 denied"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("explain --help: exit %d, no %q in\n%s", code, want, out)
		}
	}
}
