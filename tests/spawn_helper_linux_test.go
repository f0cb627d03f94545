package tests

// What the shared spawn tests (spawn_unix_test.go) need from Linux.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

const (
	// trueBin is true(1) where this OS keeps it (also on systems without
	// a merged /usr).
	trueBin = "/bin/true"
	// deniedText is what a command prints for a Landlock denial (EACCES).
	deniedText = "Permission denied"
	// execDenied is the errno of an exec Landlock refuses.
	execDenied = syscall.EACCES
	// setsidResult is what a forking run's setsid gives: seccomp refuses
	// it, so the run stays one process group.
	setsidResult = "Operation not permitted"
	// loaderLib is a library the loader goroutines of
	// TestManyChildrenCaged open and close.
	loaderLib = "libz.so.1"
	// grantBuilds: a spawn with a grant builds its own ruleset.
	grantBuilds = 1
	// nestedResult: New inside a cage works; its spawn fails closed.
	nestedResult = "unsupported EPERM"
)

// nestedPolicy is what TestNestedCage's outer policy adds to executing the
// test binary: fork, under which the inner probe's setsid is refused.
var nestedPolicy = []profile.Option{profile.Fork()}

// programEnv is the environment of TestProgramsUnderBaseV1's programs.
var programEnv = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}

// osPrograms are the rows of TestProgramsUnderBaseV1 with Linux paths or
// only on Linux.
func osPrograms() []program {
	return []program{
		{"uname", []string{"/bin/uname", "-s"}, nil, "", regexp.MustCompile(`^Linux\n$`)},
		{"sed", []string{"/bin/sed", "s/b/x/"}, nil, "abc\n", regexp.MustCompile(`^axc\n$`)},
		{"tar", []string{"/bin/sh", "-c", "printf data > /dev/null; /bin/tar -cf - /etc/hostname 2>/dev/null | /bin/tar -tf -"}, nil, "", regexp.MustCompile(`^etc/hostname\n$`)},
		{"gzip", []string{"/bin/sh", "-c", "printf hello | /bin/gzip -c | /bin/gzip -dc"}, nil, "", regexp.MustCompile(`^hello$`)},
		{"python", []string{"/usr/bin/python3", "-c", "import json, os; print(json.dumps({'n': os.cpu_count() > 0}))"}, nil, "", regexp.MustCompile(`^\{"n": true\}\n$`)},
	}
}

// requireProgram skips, through testenv, when a program is not installed:
// distributions differ.
func requireProgram(tb testing.TB, path string) {
	tb.Helper()
	testenv.RequireProgram(tb, path)
}

// osCageOptions: a stand-in home, so no test reads or plans the real one.
func osCageOptions(tb testing.TB) []cage.Option {
	tb.Helper()
	return []cage.Option{cage.WithHome(tempHome(tb))}
}

// refusalHome is the home directory TestBaseV1Refusals lists: a stand-in
// with a file in it, and the option that makes it the cage's home.
func refusalHome(tb testing.TB) (string, []cage.Option) {
	tb.Helper()
	home := tempHome(tb)
	if err := os.WriteFile(filepath.Join(home, "notes"), []byte("x"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return home, []cage.Option{cage.WithHome(home)}
}

// procStatus returns the fields of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// checkCaged returns a check that pid runs with no_new_privs, a seccomp
// filter and (as root too) no effective capabilities.
func checkCaged(testing.TB) func(*testing.T, int) {
	return func(t *testing.T, pid int) {
		t.Helper()
		st := procStatus(t, pid)
		if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" || st["CapEff"] != "0000000000000000" {
			t.Errorf("child %d: NoNewPrivs %q Seccomp %q CapEff %q", pid, st["NoNewPrivs"], st["Seccomp"], st["CapEff"])
		}
	}
}

// policyBuilds counts the Landlock rulesets this process has built.
func policyBuilds(testing.TB) (count func() int64, unit string) {
	return linuxsandbox.RulesetsBuilt, "rulesets"
}

// checkTempSpelling: a private TMPDIR is directly under the real
// temporary directory, symbolic links resolved.
func checkTempSpelling(t *testing.T, dir string) {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != tmp {
		t.Errorf("TMPDIR %q is not directly under %s", dir, tmp)
	}
}
