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

// TestDarwinTestsSkipOnlyHere: no darwin test skips on its own, so every
// darwin skip is named and strict on CI.
func TestDarwinTestsSkipOnlyHere(t *testing.T) {
	skip := regexp.MustCompile(`\.Skip(f|Now)?\(`)
	files := 0
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && d.Name() != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_darwin_test.go") {
			return nil
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if skip.MatchString(line) && !strings.Contains(line, "testenv.Skip(") {
				t.Errorf("%s:%d skips without internal/testenv: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Errorf("found %d darwin test files; the walk is broken", files)
	}
}
