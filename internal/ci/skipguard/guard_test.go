package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/internal/testenv"
)

// testdata/mixed.json is a real `go test -json` stream of a throw-away
// module (times removed): a pass, a testenv-style skip, a subtest skip, a
// failure and a timing skip.
const mixedAllow = `
# comment
example.com/fake/a TestTable/nofile_restored was not raised by Go at start-up
* TestTiming timing test: needs a run without -short and -race
`

func TestScanMixed(t *testing.T) {
	allow, err := parseAllow(mixedAllow)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := scan(f, allow)
	if err != nil {
		t.Fatal(err)
	}
	wantSkips := []skip{
		{key{"example.com/fake/a", "TestSandboxSkip"}, "a_test.go:7: procage-skip(already-sandboxed): the test process runs inside a Seatbelt sandbox", false},
		{key{"example.com/fake/a", "TestTable/nofile_restored"}, "a_test.go:11: RLIMIT_NOFILE {Cur:256 Max:9223372036854775807} was not raised by Go at start-up", true},
		{key{"example.com/fake/b", "TestTiming"}, "b_test.go:6: timing test: needs a run without -short and -race (.ci/run makes one)", true},
	}
	if diff := cmp.Diff(wantSkips, res.skips, cmp.AllowUnexported(skip{}, key{})); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
	wantProblems := []string{
		"example.com/fake/a TestSandboxSkip skipped, and the allow-list does not name it: a_test.go:7: procage-skip(already-sandboxed): the test process runs inside a Seatbelt sandbox",
		"example.com/fake/b TestFails failed",
		"example.com/fake/b failed",
	}
	if diff := cmp.Diff(wantProblems, res.problems()); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	wantCounts := map[string]counts{
		"example.com/fake/a": {pass: 3, skip: 2}, // TestPass, TestTable, TestTable/ok
		"example.com/fake/b": {fail: 1, skip: 1},
	}
	gotCounts := map[string]counts{}
	for pkg, c := range res.pkgs {
		gotCounts[pkg] = *c
	}
	if diff := cmp.Diff(wantCounts, gotCounts, cmp.AllowUnexported(counts{})); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// ev builds one test2json line.
func ev(action, pkg, test, output string) string {
	var b strings.Builder
	b.WriteString(`{"Action":"` + action + `","Package":"` + pkg + `"`)
	if test != "" {
		b.WriteString(`,"Test":"` + test + `"`)
	}
	if output != "" {
		b.WriteString(`,"Output":` + strings.ReplaceAll(`"`+output+`"`, "\n", `\n`))
	}
	return b.String() + "}\n"
}

func TestProblems(t *testing.T) {
	pass := ev("run", "p", "TestA", "") + ev("output", "p", "TestA", "=== RUN   TestA\n") + ev("pass", "p", "TestA", "") + ev("pass", "p", "", "")
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{"all pass", pass, nil},
		{"empty stream", "", []string{"no test passed"}},
		{"only a package without test files", ev("skip", "q", "", ""), []string{"no test passed"}},
		{"not JSON is reported, not a problem", "# p\nvet: something\n" + pass, nil},
		{"unfinished", pass + ev("run", "p", "TestB", "") + ev("output", "p", "TestB", "panic: boom\n") + ev("fail", "p", "", ""),
			[]string{"p failed", "p TestB started and never finished"}},
		{"build failure", `{"ImportPath":"p [p.test]","Action":"build-fail"}` + "\n" + pass,
			[]string{"p [p.test] did not build"}},
		{"skip without a message", pass + ev("run", "p", "TestC", "") + ev("output", "p", "TestC", "--- SKIP: TestC (0.00s)\n") + ev("skip", "p", "TestC", ""),
			[]string{"p TestC skipped, and the allow-list does not name it: "}},
		{"allowed skip", pass + ev("run", "p", "TestD", "") + ev("output", "p", "TestD", "    d_test.go:3: known reason\n") + ev("skip", "p", "TestD", ""), nil},
		{"allowed text in another test", pass + ev("run", "p", "TestE", "") + ev("output", "p", "TestE", "    e_test.go:3: known reason\n") + ev("skip", "p", "TestE", ""),
			[]string{"p TestE skipped, and the allow-list does not name it: e_test.go:3: known reason"}},
	}
	allow := []allowRule{{pkg: "p", test: "TestD", text: "known reason"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scan(strings.NewReader(tt.stream), allow)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.problems()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	if _, err := parseAllow(defaultAllow); err != nil {
		t.Errorf("built-in allow.txt: %v", err)
	}
	for _, bad := range []string{"p TestA", "p", "p TestA   "} {
		if _, err := parseAllow(bad); err == nil {
			t.Errorf("parseAllow(%q) = nil error, want one", bad)
		}
	}
	got, err := parseAllow("p T/sub a  b \n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]allowRule{{"p", "T/sub", "a  b"}}, got, cmp.AllowUnexported(allowRule{})); diff != "" {
		t.Errorf("parseAllow (-want +got):\n%s", diff)
	}
}

// TestLinuxAllow: the Linux allow-list parses, and each rule accepts only
// a skip internal/testenv named, for a reason that depends on who runs the
// tests (root or not), never on the host; but the one test about a kernel
// without Landlock, which .ci/kernel-matrix runs.
func TestLinuxAllow(t *testing.T) {
	b, err := os.ReadFile("allow_linux.txt")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseAllow(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("allow_linux.txt has no rules")
	}
	var reasons []string
	for _, r := range []testenv.Reason{testenv.ReasonRunsAsRoot, testenv.ReasonNeedsRoot} {
		reasons = append(reasons, strings.TrimSuffix(testenv.Message(r, ""), ": "))
	}
	landlockOn := strings.TrimSuffix(testenv.Message(testenv.ReasonLandlockOn, ""), ": ")
	for _, r := range rules {
		if r.pkg == "*" || r.test == "*" {
			t.Errorf("rule %+v: name the package and the test", r)
		}
		if !slices.Contains(reasons, r.text) && (r.text != landlockOn || r.test != "TestLinuxNoLandlockKernel") {
			t.Errorf("rule %+v: want one of the texts %q", r, reasons)
		}
		requireTestFunc(t, r)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	allowFile := filepath.Join(dir, "allow.txt")
	if err := os.WriteFile(allowFile, []byte(mixedAllow), 0o600); err != nil {
		t.Fatal(err)
	}
	okFile := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(okFile, []byte(ev("run", "p", "TestA", "")+ev("pass", "p", "TestA", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	mixed := filepath.Join("testdata", "mixed.json")
	tests := []struct {
		name       string
		allow      string
		files      []string
		mustPass   []string
		stdin      string
		want       int
		wantStderr string
	}{
		{"clean file", "", []string{okFile}, nil, "", 0, ""},
		{"clean stdin", "", nil, nil, ev("run", "p", "TestA", "") + ev("pass", "p", "TestA", ""), 0, ""},
		{"mixed", allowFile, []string{mixed}, nil, "", 1, "TestSandboxSkip skipped"},
		{"two files", allowFile, []string{okFile, mixed}, nil, "", 1, "TestFails failed"},
		{"missing file", "", []string{filepath.Join(dir, "nope.json")}, nil, "", 2, "no such file"},
		{"bad allow-list", okFile, []string{okFile}, nil, "", 2, "allow-list line 1"},
		{"must pass, passed", "", []string{okFile}, []string{"p TestA"}, "", 0, ""},
		{"must pass, not run", "", []string{okFile}, []string{"p TestA", "p TestZ"}, "", 1, "p TestZ must pass"},
		{"must pass, skipped", allowFile, []string{mixed}, []string{"example.com/fake/b TestTiming"}, "", 1, "TestTiming must pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(tt.allow, tt.mustPass, tt.files, strings.NewReader(tt.stdin), &stdout, &stderr)
			if got != tt.want || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("run = %d, stderr %q; want %d, stderr containing %q", got, stderr.String(), tt.want, tt.wantStderr)
			}
		})
	}
	// The summary names every skip and the totals.
	var stdout bytes.Buffer
	run(allowFile, nil, []string{mixed}, nil, &stdout, &bytes.Buffer{})
	for _, want := range []string{
		"skip (NOT ALLOWED) example.com/fake/a TestSandboxSkip: ",
		"skip (allowed) example.com/fake/b TestTiming: ",
		"2 packages; tests: pass 3, skip 3, fail 1",
		"FAIL example.com/fake/b TestFails:\n=== RUN   TestFails\n    b_test.go:5: boom\n--- FAIL: TestFails",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestKernelMatrixAllow: .ci/kernel-matrix's allow-list parses, each rule
// accepts only a skip internal/testenv named, a rule for any test is the
// Landlock ABI's alone (Linux 6.1 is older than every policy needs), and
// each named test exists. No rule lets a test skip for want of a user
// namespace: the guest enters its root with switch_root, so nobody gets
// one there and the T1 tests must run.
func TestKernelMatrixAllow(t *testing.T) {
	b, err := os.ReadFile("allow_kernel_matrix.txt")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseAllow(string(b))
	if err != nil {
		t.Fatal(err)
	}
	reason := func(r testenv.Reason) string { return strings.TrimSuffix(testenv.Message(r, ""), ": ") }
	var reasons []string
	for _, r := range []testenv.Reason{testenv.ReasonLandlockABI, testenv.ReasonLandlockOn, testenv.ReasonNoKernelFeature, testenv.ReasonRunsAsRoot, testenv.ReasonNeedsRoot, testenv.ReasonNoHostAddress} {
		reasons = append(reasons, reason(r))
	}
	wildcard := false
	for _, r := range rules {
		if !slices.Contains(reasons, r.text) {
			t.Errorf("rule %+v: want one of the texts %q", r, reasons)
		}
		if r.pkg == "*" || r.test == "*" {
			if r.text != reason(testenv.ReasonLandlockABI) {
				t.Errorf("rule %+v: only the Landlock ABI may skip any test", r)
			}
			wildcard = true
			continue
		}
		requireTestFunc(t, r)
	}
	if !wildcard {
		t.Errorf("no rule for the Landlock ABI's skips")
	}
}

// requireTestFunc fails unless r's package has r's test function (a
// subtest's, for a name with "/"): a rule for a test that no longer exists
// allows nothing.
func requireTestFunc(t *testing.T, r allowRule) {
	t.Helper()
	dir := filepath.Join("..", "..", "..", strings.TrimPrefix(r.pkg, "github.com/procage-go/procage/"))
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	top, _, _ := strings.Cut(r.test, "/")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nfunc "+top+"(") {
			return
		}
	}
	t.Errorf("rule %+v: no func %s in %s", r, r.test, dir)
}
