package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestPlan(t *testing.T) {
	code, out, errs := runCLI(t, "plan", "--read", "/usr", "--network", "loopback", "--port", "any")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "\n(version 1)\n") || !strings.Contains(out, "(deny default)") {
		t.Errorf("plan lacks (version 1) and (deny default):\n%s", out)
	}
	if !strings.Contains(out, `(allow file-read* (subpath "/usr"))`) || !strings.Contains(out, `(remote ip "localhost:*")`) {
		t.Errorf("plan lacks the policy's rules:\n%s", out)
	}
}

// TestPlanShowsRewrite: a policy path through a symbolic link is shown
// rewritten, and the link itself gets a metadata rule.
func TestPlanShowsRewrite(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "plan", "--read", link+"/sub")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	for _, want := range []string{
		"; rewrite: " + link + "/sub -> " + real + "/sub (symlink " + link + ")",
		`(subpath "` + real + `/sub")`,
		`(literal "` + link + `")`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %s:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "plan", "--read", link, "--json")
	if code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	var got struct {
		Policy   map[string]any
		Rewrites []struct{ From, To, Reason, Via string }
		Rules    int
		Profile  string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if len(got.Rewrites) != 1 || got.Rewrites[0].From != link || got.Rewrites[0].To != real || got.Rewrites[0].Reason != "symlink" {
		t.Errorf("rewrites = %+v", got.Rewrites)
	}
	if got.Policy["version"] != float64(1) || got.Rules == 0 || !strings.HasPrefix(got.Profile, "(version 1)") {
		t.Errorf("json = %+v", got)
	}
}

func TestPlanPolicyFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(f, []byte(`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"/usr"}],"fork":true}`), 0o644)
	code, out, errs := runCLI(t, "plan", "--policy", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "; parameter bound per spawn: PROCAGE_RUN_MARKER") || !strings.Contains(out, "(allow process-fork)") {
		t.Errorf("forking policy file not lowered as such:\n%s", out)
	}
}

func TestBadInput(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(f, []byte(`{"version":1,"base":"v1","colour":1}`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "Usage"},
		{[]string{"frob"}, `unknown command "frob"`},
		{[]string{"plan", "--read", "usr"}, `--read "usr": path is not absolute`},
		{[]string{"plan", "--write", "/a/../b"}, `--write "/a/../b": path is not normalised`},
		{[]string{"plan", "--network", "wifi"}, `--network "wifi": want off, loopback or on`},
		{[]string{"plan", "--network", "off", "--port", "80"}, "ports apply to loopback and on modes only"},
		{[]string{"plan", "--network", "loopback"}, "loopback mode names its ports"},
		{[]string{"plan", "--network", "loopback", "--listen-any", "--port", "80"}, "needs network on"},
		{[]string{"plan", "--port", "x"}, `--port "x": not a number or any`},
		{[]string{"plan", "--waive", "all"}, `--waive "all": unknown hard-deny class`},
		{[]string{"plan", "--seatbelt", "(allow file-raed*)"}, `unknown operation "file-raed*"`},
		{[]string{"plan", "--mach", "a b"}, `--mach "a b"`},
		{[]string{"plan", "--limit", "0"}, "--limit 0: must be at least 1"},
		{[]string{"plan", "--limit", "3"}, "more than the limit of 3"},
		{[]string{"plan", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"plan", "extra"}, `unexpected argument "extra"`},
		{[]string{"plan", "--policy", f}, "colour: unknown field"},
		{[]string{"plan", "--policy", f, "--read", "/usr"}, "--policy and --read"},
		{[]string{"plan", "--policy", "/nonexistent.json"}, "no such file"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stdout %q)", tt.args, code, out)
		}
		if !strings.Contains(errs, tt.want) {
			t.Errorf("%v: stderr %q, want it to mention %q", tt.args, errs, tt.want)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") > 0 && len(tt.args) > 1 {
			t.Errorf("%v: error is not one line: %q", tt.args, errs)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"plan", "--help"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "Usage") {
			t.Errorf("%v: exit %d, output %q", args, code, out)
		}
	}
	_, out, _ := runCLI(t, "plan", "-h")
	for _, flag := range []string{"-read", "-write", "-exec", "-network", "-port", "-listen-any", "-unix-socket", "-mach", "-fork", "-exec-target-only", "-waive", "-seatbelt", "-policy", "-json", "-limit"} {
		if !strings.Contains(out, flag) {
			t.Errorf("plan --help does not explain %s", flag)
		}
	}
}

func TestExplain(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	home, _ = filepath.EvalSymlinks(home)
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
		{[]string{"frob", "/x"}, 2, "not a concrete Seatbelt operation"},
		{[]string{"file-read-data"}, 2, ""},
		{[]string{}, 2, "want OPERATION and ARGUMENT"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, append([]string{"explain"}, tt.args...)...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("explain %v: exit %d, output %q %q; want exit %d mentioning %q", tt.args, code, out, errs, tt.code, tt.want)
		}
	}
}
