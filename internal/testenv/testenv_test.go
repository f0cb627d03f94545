package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// fakeTB records Skip and Fatal instead of ending the goroutine.
type fakeTB struct {
	testing.TB
	skipped, fatal string
	cleanups       []func()
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skip(args ...any)               { f.skipped = strings.TrimSpace(fmt.Sprint(args...)) }
func (f *fakeTB) Fatal(args ...any)              { f.fatal = fmt.Sprint(args...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Cleanup(fn func())              { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) runCleanups() {
	for _, c := range f.cleanups {
		c()
	}
}

func TestSkip(t *testing.T) {
	tests := []struct {
		strict              string
		wantSkip, wantFatal bool
	}{
		{"", true, false},
		{"0", true, false},
		{"1", false, true},
		{"yes", false, true},
	}
	for _, tt := range tests {
		t.Run("strict="+tt.strict, func(t *testing.T) {
			t.Setenv(StrictEnv, tt.strict)
			f := &fakeTB{TB: t}
			Skip(f, ReasonSandboxed, "detail")
			want := "procage-skip(already-sandboxed): detail"
			if got := f.skipped != ""; got != tt.wantSkip || (got && f.skipped != want) {
				t.Errorf("skipped %q, want skip=%v with %q", f.skipped, tt.wantSkip, want)
			}
			if got := f.fatal != ""; got != tt.wantFatal || (got && !strings.HasPrefix(f.fatal, want+" [")) {
				t.Errorf("fatal %q, want fatal=%v starting %q", f.fatal, tt.wantFatal, want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		r       int32
		want    bool
		wantErr bool
	}{
		{0, false, false},
		{1, true, false},
		{-1, false, true}, // an error is never read as "sandboxed"
		{2, false, true},
	}
	for _, tt := range tests {
		got, err := verdict(tt.r, syscall.EINVAL)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("verdict(%d) = %v, %v; want %v, error %v", tt.r, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCaseSensitiveVolume(t *testing.T) {
	t.Run("unset skips", func(t *testing.T) {
		t.Setenv(StrictEnv, "")
		t.Setenv(CaseSensitiveVolumeEnv, "")
		f := &fakeTB{TB: t}
		if dir := CaseSensitiveVolume(f); dir != "" || !strings.Contains(f.skipped, string(ReasonNoCaseSensitiveVolume)) {
			t.Errorf("CaseSensitiveVolume = %q, skipped %q; want a %s skip", dir, f.skipped, ReasonNoCaseSensitiveVolume)
		}
	})
	t.Run("missing fails", func(t *testing.T) {
		t.Setenv(CaseSensitiveVolumeEnv, filepath.Join(t.TempDir(), "nonexistent"))
		f := &fakeTB{TB: t}
		if dir := CaseSensitiveVolume(f); dir != "" || f.fatal == "" || f.skipped != "" {
			t.Errorf("CaseSensitiveVolume = %q, fatal %q, skipped %q; want a failure", dir, f.fatal, f.skipped)
		}
	})
	// The Linux test file systems here are case-sensitive; a folding
	// volume is covered on the macOS lane's default volume by the
	// pathresolve darwin tests.
	t.Run("case-sensitive", func(t *testing.T) {
		mnt := t.TempDir()
		t.Setenv(CaseSensitiveVolumeEnv, mnt)
		f := &fakeTB{TB: t}
		dir := CaseSensitiveVolume(f)
		if f.fatal != "" || f.skipped != "" || !strings.HasPrefix(dir, mnt) {
			t.Fatalf("CaseSensitiveVolume = %q, fatal %q, skipped %q; want a directory under %s", dir, f.fatal, f.skipped, mnt)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Errorf("%s: %v", dir, err)
		}
		f.runCleanups()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still exists after cleanup: %v", dir, err)
		}
	})
}

// TestRequireHost: the root and program checks skip exactly when the host
// lacks what the test needs, naming the reason.
func TestRequireHost(t *testing.T) {
	t.Setenv(StrictEnv, "")
	root := os.Geteuid() == 0
	for _, tt := range []struct {
		name     string
		call     func(testing.TB)
		wantSkip bool
		reason   Reason
	}{
		{"RequireRoot", func(tb testing.TB) { RequireRoot(tb, "why") }, !root, ReasonNeedsRoot},
		{"RequireNotRoot", func(tb testing.TB) { RequireNotRoot(tb, "why") }, root, ReasonRunsAsRoot},
		{"RequireProgram/present", func(tb testing.TB) { RequireProgram(tb, os.Args[0]) }, false, ReasonNoProgram},
		{"RequireProgram/missing", func(tb testing.TB) { RequireProgram(tb, "/nonexistent/procage-prog") }, true, ReasonNoProgram},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTB{TB: t}
			tt.call(f)
			if got := f.skipped != ""; got != tt.wantSkip || f.fatal != "" {
				t.Fatalf("skipped %q, fatal %q; want skip=%v", f.skipped, f.fatal, tt.wantSkip)
			}
			if tt.wantSkip && !strings.HasPrefix(f.skipped, Message(tt.reason, "")) {
				t.Errorf("skipped %q, want the reason %s", f.skipped, tt.reason)
			}
		})
	}
}

// TestSkipsGoThroughTestenv: no darwin test, and no test of tests/, cage/
// or internal/linuxsandbox (which the Linux runs of .ci/run and
// .ci/kernel-matrix guard), skips on its own, so every such skip is named,
// and strict on the macOS lane.
func TestSkipsGoThroughTestenv(t *testing.T) {
	skip := regexp.MustCompile(`\.Skip(f|Now)?\(`)
	root := filepath.Join("..", "..")
	var darwin, guarded int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && d.Name() != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		switch {
		case dir == "tests" || dir == "cage" || dir == "internal/linuxsandbox":
			guarded++
		case strings.HasSuffix(path, "_darwin_test.go"):
			darwin++
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if skip.MatchString(line) && !strings.Contains(line, "testenv.Skip(") {
				t.Errorf("%s:%d skips without internal/testenv: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if darwin < 3 || guarded < 20 {
		t.Errorf("found %d darwin test files outside tests/ and cage/ and %d test files in them; the walk is broken", darwin, guarded)
	}
}

// TestSourceFile: a package's file is found from its own directory and
// from another working directory (through the path the caller was
// compiled from), never from an unrelated directory holding a file of the
// same name.
func TestSourceFile(t *testing.T) {
	want, err := os.ReadFile("testenv.go")
	if err != nil {
		t.Fatal(err)
	}
	if got := SourceFile(t, "testenv.go"); string(got) != string(want) {
		t.Errorf("from the package directory: %d bytes, want testenv.go's %d", len(got), len(want))
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "testenv.go"), []byte("not this one"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(other)
	if got := SourceFile(t, "testenv.go"); string(got) != string(want) {
		t.Errorf("from %s: %q, want testenv.go's contents", other, got)
	}
}
