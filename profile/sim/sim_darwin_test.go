package sim

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/internal/report"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
)

// The darwin tests apply small profiles with /usr/bin/sandbox-exec (in the
// tests only: the library never runs it) and compare what Seatbelt did with
// what Decide says.

const sandboxExec = "/usr/bin/sandbox-exec"

// requireSeatbelt skips only when sandbox_check says the test process is
// already sandboxed (a sandboxed process may not apply another profile),
// and otherwise fails the test if sandbox-exec cannot apply a profile.
func requireSeatbelt(tb testing.TB) {
	tb.Helper()
	testenv.RequireUnsandboxed(tb)
	out, err := exec.Command(sandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true").CombinedOutput()
	if err != nil {
		tb.Fatalf("sandbox-exec cannot apply a profile: %v: %s", err, out)
	}
}

// q quotes a string for SBPL.
func q(tb testing.TB, s string) string {
	tb.Helper()
	out, err := sbpl.Quote(s)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// run applies profile to argv with sandbox-exec and reports whether the
// program succeeded; a profile sandbox-exec cannot apply fails the test.
func run(tb testing.TB, profile string, params map[string]string, argv ...string) bool {
	tb.Helper()
	ok, _ := runOut(tb, profile, params, argv...)
	return ok
}

// runOut is run, also returning the program's standard output.
func runOut(tb testing.TB, profile string, params map[string]string, argv ...string) (bool, string) {
	tb.Helper()
	args := []string{"-p", profile}
	for k, v := range params {
		args = append(args, "-D", k+"="+v)
	}
	cmd := exec.Command(sandboxExec, append(args, argv...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// sandbox-exec reports its own failures (the profile not applied, the
	// program not executed) as "sandbox-exec: ...".
	if strings.Contains(stderr.String(), "sandbox-exec:") {
		tb.Fatalf("sandbox-exec could not apply %s: %s", profile, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		tb.Fatalf("running %v: %v", argv, err)
	}
	return err == nil, stdout.String()
}

// checkInChild starts a sleeping child under profile and asks its sandbox,
// through sandbox_check, whether it denies file-read-data of path.
func checkInChild(tb testing.TB, lib *libsandbox.Lib, profile string, params map[string]string, path string) bool {
	tb.Helper()
	args := []string{"-p", profile}
	for k, v := range params {
		args = append(args, "-D", k+"="+v)
	}
	cmd := exec.Command(sandboxExec, append(args, "/bin/sleep", "30")...)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// sandbox-exec applies the profile, then executes sleep: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		is, err := lib.IsSandboxed(cmd.Process.Pid)
		if err != nil {
			tb.Fatalf("IsSandboxed: %v", err)
		}
		if is {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the child under %s never became sandboxed", profile)
		}
		time.Sleep(10 * time.Millisecond)
	}
	denied, err := lib.Check(cmd.Process.Pid, "file-read-data", libsandbox.FilterPath, path, libsandbox.CheckNoReport)
	if err != nil {
		tb.Fatalf("sandbox_check: %v", err)
	}
	return denied
}

func TestDecideMatchesSeatbelt(t *testing.T) {
	requireSeatbelt(t)
	// With PROCAGE_REPORT_DIR set, one row per case (internal/report).
	rep := report.Open(t, "sim")
	dir, err := filepath.EvalSymlinks(t.TempDir()) // /var/folders/... is /private/var/folders/...
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	other := filepath.Join(dir, "g")
	nfd := filepath.Join(dir, "cafe\u0301") // created decomposed
	nfc := filepath.Join(dir, "caf\u00e9")
	for _, p := range []string{file, other, nfd} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	upper := strings.ToUpper(dir)
	allowAll := "(version 1)(allow default)"
	tests := []struct {
		name   string
		rules  string
		params map[string]string
		path   string // read with /bin/cat
	}{
		{"literal deny", `(deny file-read* (literal ` + q(t, file) + `))`, nil, file},
		{"literal deny other file", `(deny file-read* (literal ` + q(t, file) + `))`, nil, other},
		{"subpath deny", `(deny file-read-data (subpath ` + q(t, dir) + `))`, nil, file},
		{"deny in another case", `(deny file-read* (subpath ` + q(t, upper) + `))`, nil, file},
		{"deny composed, name decomposed", `(deny file-read* (literal ` + q(t, nfc) + `))`, nil, nfd},
		{"deny decomposed, opened composed", `(deny file-read* (literal ` + q(t, nfd) + `))`, nil, nfc},
		{"specific allow beats later wildcard deny", `(allow file-read-data (literal ` + q(t, file) + `))(deny file-read* (subpath ` + q(t, dir) + `))`, nil, file},
		{"specific deny beats later wildcard allow", `(deny file-read-data (literal ` + q(t, file) + `))(allow file-read* (subpath ` + q(t, dir) + `))`, nil, file},
		{"last match: allow", `(deny file-read* (literal ` + q(t, file) + `))(allow file-read* (subpath ` + q(t, dir) + `))`, nil, file},
		{"last match: deny", `(allow file-read* (subpath ` + q(t, dir) + `))(deny file-read* (literal ` + q(t, file) + `))`, nil, file},
		{"prefix deny", `(deny file-read* (prefix ` + q(t, dir+"/") + `))`, nil, file},
		{"regex deny", `(deny file-read* (regex #"/f$"))`, nil, file},
		// The Rust procage's spelling matrix says every path matches
		// case-insensitively; constellation-works/orbit#494 claims regex
		// does not fold case. This
		// case decides it for the simulator.
		{"regex in another case", `(deny file-read* (regex #"/F$"))`, nil, file},
		{"regex no match", `(deny file-read* (regex #"/f$"))`, nil, other},
		{"require-not", `(deny file-read* (require-all (subpath ` + q(t, dir) + `) (require-not (literal ` + q(t, file) + `))))`, nil, file},
		{"require-not other", `(deny file-read* (require-all (subpath ` + q(t, dir) + `) (require-not (literal ` + q(t, file) + `))))`, nil, other},
		{"vnode-type", `(deny file-read-data (require-all (subpath ` + q(t, dir) + `) (vnode-type REGULAR-FILE)))`, nil, file},
		{"param", `(deny file-read* (subpath (param "D")))`, map[string]string{"D": dir}, file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := allowAll + tt.rules
			got := run(t, src, tt.params, "/bin/cat", tt.path)
			a := Access{Op: "file-read-data", Path: tt.path, VnodeType: "REGULAR-FILE", Params: tt.params}
			d, err := decide(t, src, a)
			if err != nil {
				t.Fatal(err)
			}
			rep.Sim(simRow(tt.name, src, a, d, report.Outcome(got), ""))
			if got != d.Allowed {
				t.Errorf("%s: cat %s under %s: Seatbelt allowed=%v, simulator %v", tt.name, tt.path, src, got, d)
			}
		})
	}

	// The same matrix asked of the kernel's own evaluator: sandbox_check
	// on a live sandboxed child, for the path the cases name.
	t.Run("sandbox_check", func(t *testing.T) {
		lib, err := libsandbox.Load()
		if err != nil {
			t.Fatalf("libsandbox: %v", err)
		}
		for _, tt := range tests {
			src := allowAll + tt.rules
			denied := checkInChild(t, lib, src, tt.params, tt.path)
			a := Access{Op: "file-read-data", Path: tt.path, VnodeType: "REGULAR-FILE", Params: tt.params}
			d, err := decide(t, src, a)
			if err != nil {
				t.Fatal(err)
			}
			rep.Sim(simRow(tt.name, src, a, d, "", report.Outcome(!denied)))
			if !denied != d.Allowed {
				t.Errorf("%s: sandbox_check(file-read-data, %s) under %s: denied=%v, simulator %v", tt.name, tt.path, src, denied, d)
			}
		}
	})

	t.Run("process-exec", func(t *testing.T) {
		src := allowAll + `(deny process-exec* (literal "/bin/cat"))`
		// sh is allowed to run; its exec of cat is what the rule refuses.
		got := run(t, src, nil, "/bin/sh", "-c", "/bin/cat /dev/null")
		a := Access{Op: "process-exec*", Path: "/bin/cat", VnodeType: "REGULAR-FILE"}
		d, err := decide(t, src, a)
		if err != nil {
			t.Fatal(err)
		}
		rep.Sim(simRow("process-exec", src, a, d, report.Outcome(got), ""))
		if got != d.Allowed || got {
			t.Errorf("exec /bin/cat under %s: Seatbelt allowed=%v, simulator %v", src, got, d)
		}
	})

	t.Run("unix-socket", func(t *testing.T) {
		sock := filepath.Join(dir, "s")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		for _, rules := range []string{
			`(deny network-outbound (remote unix-socket (path-literal ` + q(t, sock) + `)))`,
			`(deny network-outbound (remote unix-socket (path-literal ` + q(t, other) + `)))`,
		} {
			src := allowAll + rules
			got := run(t, src, nil, "/usr/bin/nc", "-U", sock)
			a := Access{Op: "network-outbound", Addr: sock}
			d, err := decide(t, src, a)
			if err != nil {
				t.Fatal(err)
			}
			rep.Sim(simRow("unix-socket", src, a, d, report.Outcome(got), ""))
			if got != d.Allowed {
				t.Errorf("nc -U %s under %s: Seatbelt allowed=%v, simulator %v", sock, src, got, d)
			}
		}
	})

	t.Run("sysctl", func(t *testing.T) {
		for _, rules := range []string{
			`(deny sysctl-read (sysctl-name "kern.ostype"))`,
			`(deny sysctl-read (sysctl-name-prefix "kern.osty"))`,
			`(deny sysctl-read (sysctl-name "kern.osrelease"))`,
		} {
			src := allowAll + rules
			// Judge by the output: sysctl's exit status for a refused
			// name is not documented.
			_, out := runOut(t, src, nil, "/usr/sbin/sysctl", "-n", "kern.ostype")
			got := strings.TrimSpace(out) == "Darwin"
			a := Access{Op: "sysctl-read", Name: "kern.ostype"}
			d, err := decide(t, src, a)
			if err != nil {
				t.Fatal(err)
			}
			rep.Sim(simRow("sysctl", src, a, d, report.Outcome(got), ""))
			if got != d.Allowed {
				t.Errorf("sysctl kern.ostype under %s: Seatbelt allowed=%v, simulator %v", src, got, d)
			}
		}
	})
}

// checkOpInChild starts a sleeping child under profile and asks its
// sandbox, through sandbox_check, whether it denies a, an access with no
// argument or a path.
func checkOpInChild(tb testing.TB, profile string, a Access) bool {
	tb.Helper()
	lib, err := libsandbox.Load()
	if err != nil {
		tb.Fatalf("libsandbox: %v", err)
	}
	cmd := exec.Command(sandboxExec, "-p", profile, "/bin/sleep", "30")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		is, err := lib.IsSandboxed(cmd.Process.Pid)
		if err != nil {
			tb.Fatalf("IsSandboxed: %v", err)
		}
		if is {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the child under %s never became sandboxed", profile)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ft, arg := libsandbox.FilterNone, ""
	if a.Path != "" {
		ft, arg = libsandbox.FilterPath, a.Path
	}
	denied, err := lib.Check(cmd.Process.Pid, a.Op, ft, arg, libsandbox.CheckNoReport)
	if err != nil {
		tb.Fatalf("sandbox_check(%s): %v", a.Op, err)
	}
	return denied
}

// variantArgv is the command that attempts a variantCase's access.
func variantArgv(tb testing.TB, a Access) []string {
	tb.Helper()
	switch a.Op {
	case "file-read-data":
		return []string{"/bin/cat", a.Path}
	case "file-write-data":
		return []string{"/bin/sh", "-c", `printf x >> "$1"`, "sh", a.Path}
	case "file-link":
		return []string{"/bin/ln", a.Source, a.Path}
	case "signal":
		// The shell signals itself: a refused kill falls through to exit 1.
		return []string{"/bin/sh", "-c", `trap "exit 0" TERM; kill -TERM $$; sleep 1; exit 1`}
	}
	tb.Fatalf("no command attempts %s", a.Op)
	return nil
}

// TestVariantsOnSeatbelt runs each variantCase on the kernel and reports
// which readings of Seatbelt (sim.Variants) agree with it, one
// "variant-case" line per case; it fails when Default does not, naming the
// variants that do, so the default can be changed to what macOS follows.
//
// With PROCAGE_REPORT_DIR set, each case writes one row for Default and
// one per one-rule alternative (sim.Alternatives), named in the row's
// variant column.
func TestVariantsOnSeatbelt(t *testing.T) {
	requireSeatbelt(t)
	rep := report.Open(t, "sim")
	for _, c := range variantCases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{"in", "out"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"f", "in/s"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			src := c.source(dir)
			var got bool
			var execOut, checkOut string
			if c.check {
				got = !checkOpInChild(t, src, c.access(dir))
				checkOut = report.Outcome(got)
			} else {
				got = run(t, src, nil, variantArgv(t, c.access(dir))...)
				execOut = report.Outcome(got)
			}
			prof, err := sbpl.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range append([]Variant{Default}, Alternatives()...) {
				d, err := v.Decide(prof, c.access(dir))
				if err != nil {
					t.Fatal(err)
				}
				row := simRow("variant: "+c.name, src, c.access(dir), d, execOut, checkOut)
				if v != Default {
					row.Variant = v.String()
				}
				rep.Sim(row)
			}
			var agree []string
			for v, allowed := range variantVerdicts(t, c, dir) {
				if allowed == got {
					agree = append(agree, v.String())
				}
			}
			slices.Sort(agree)
			t.Logf("variant-case %q (settles %s): Seatbelt allowed=%v; agreeing variants: %s", c.name, c.decide, got, strings.Join(agree, " "))
			if got != c.want {
				t.Errorf("%s: Seatbelt allowed=%v under %s, the Default reading says %v; variants that agree: %s",
					c.name, got, src, c.want, strings.Join(agree, " "))
			}
		})
	}
}

// TestFilteredDeniesOnSeatbelt: the filters Lower gives unfiltered denies
// (subpath "/" for files, any address for the network) compile, and the
// deny holds over a filtered grant on the kernel as the simulator says.
func TestFilteredDeniesOnSeatbelt(t *testing.T) {
	requireSeatbelt(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(dir), profile.Network(profile.NetworkLoopback),
		profile.Seatbelt(`(deny network*)`), profile.Seatbelt(`(deny file-write*)`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := seatbelt.Lower(p, profile.Env{})
	if err != nil {
		t.Fatal(err)
	}
	src := plan.Text()
	if !run(t, src, nil, "/usr/bin/true") {
		t.Fatalf("/usr/bin/true failed under the lowered profile:\n%s", src)
	}
	file := filepath.Join(dir, "f")
	got := run(t, src, nil, "/bin/sh", "-c", `printf x > "$1"`, "sh", file)
	d, err := Decide(plan.Profile, Access{Op: "file-write-create", Path: file, VnodeType: "REGULAR-FILE"})
	if err != nil {
		t.Fatal(err)
	}
	if got || d.Allowed {
		t.Errorf("write %s under a Seatbelt-layer (deny file-write*): Seatbelt allowed=%v, simulator %v", file, got, d)
	}
}

// simRow is a case's row in the kernel report (internal/report); exec and
// check are the sandbox-exec and sandbox_check outcomes, "" when not asked.
func simRow(name, src string, a Access, d Decision, exec, check string) report.SimRow {
	return report.SimRow{Case: name, Profile: src, Params: a.Params, Access: a.String(),
		SandboxExec: exec, SandboxCheck: check, SimAllowed: d.Allowed, SimRule: d.Rule, SimDecision: d.String()}
}
