package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/preset"
	"github.com/procage-go/procage/profile"
)

// presetProject writes files into a fresh directory (kernel spelling) the
// policy grants read-only: a build writes only to the run's private
// temporary directory and caches.
func presetProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := tempHome(t)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// presetRun runs the program name (found on PATH, or the test skips) in
// dir under a cage with the presets, project read-only, closes the cage
// (removing its caches) and returns the run's output.
func presetRun(t *testing.T, dir string, presets []preset.Preset, env []string, name string, args ...string) (string, error) {
	t.Helper()
	requireCage(t)
	path, err := exec.LookPath(name)
	if err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, name+" is not on PATH: "+err.Error())
	}
	c := newCage(t, policy(t, profile.Read(dir)), cage.WithPresets(presets...))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := c.Command(ctx, path, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(cmd.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if cerr := c.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	return string(out), err
}

// cacheDirPrefix is where a cage keeps its preset caches.
func cacheDirPrefix() string {
	tmp, _ := filepath.EvalSymlinks(os.TempDir())
	return filepath.Join(tmp, "procage-cache-")
}

// privateDir checks that a cache variable's value, as the run printed it,
// was inside the cage's cache directory, which Close removed.
func privateDir(t *testing.T, name, value string) {
	t.Helper()
	value = strings.TrimSpace(value)
	if !strings.HasPrefix(value, cacheDirPrefix()) {
		t.Errorf("%s in the run = %q, want a directory in the cage's caches", name, value)
		return
	}
	if _, err := os.Stat(value); !os.IsNotExist(err) {
		t.Errorf("%s %s still there after the run (err %v)", name, value, err)
	}
}

// emptyDir fails unless dir holds nothing.
func emptyDir(t *testing.T, what, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		t.Errorf("%s %s was written: %v", what, dir, ents)
	}
}

// TestPresetGo: go test of a tiny module under preset.Go builds with a
// private GOCACHE; the caller's GOCACHE (a stand-in the test names in the
// environment, as a user's shell would) is not written, and the real one
// is not granted.
func TestPresetGo(t *testing.T) {
	dir := presetProject(t, map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.21\n",
		"tiny.go":      "package tiny\n\nfunc Add(a, b int) int { return a + b }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n",
	})
	localGo(t)
	userCache := t.TempDir()
	t.Setenv("GOCACHE", userCache)
	t.Setenv("GOFLAGS", "-buildvcs=false")
	out, err := presetRun(t, dir, []preset.Preset{preset.Go}, nil, "go", "test", "-count=1", "./...")
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("go test in the cage: %v\n%s", err, out)
	}
	emptyDir(t, "the caller's GOCACHE", userCache)
	out, err = presetRun(t, dir, []preset.Preset{preset.Go}, nil, "go", "env", "GOCACHE")
	if err != nil {
		t.Fatalf("go env GOCACHE: %v\n%s", err, out)
	}
	privateDir(t, "GOCACHE", out)

	// The real cache, as the go command reports it, is nowhere writable.
	real, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t), cage.WithPresets(preset.Go))
	for _, r := range c.Policy().FSRules() {
		if r.Access&profile.AccessWrite != 0 {
			t.Errorf("preset go grants write: %v (the real GOCACHE is %s)", r, strings.TrimSpace(string(real)))
		}
	}
}

// localGo keeps the go on PATH from switching toolchains (GOTOOLCHAIN,
// which .ci/run sets): a switch needs the toolchain in the module cache,
// which the preset grants read-only and nobody's home does not have.
func localGo(t *testing.T) {
	t.Setenv("GOTOOLCHAIN", "local")
}

// TestPresetCacheShared: the runs of one cage share its GOCACHE, so the
// second go build of a package compiles nothing (go build -x lists each
// compile); the caches are the cage's, not the caller's, and Close
// removes them (refused while a run has not been waited for), after which
// Start fails. Concurrent builds in the cage share the cache too.
func TestPresetCacheShared(t *testing.T) {
	dir := presetProject(t, map[string]string{
		"go.mod":  "module example.com/tiny\n\ngo 1.21\n",
		"tiny.go": "package tiny\n\nfunc Add(a, b int) int { return a + b }\n",
	})
	requireCage(t)
	localGo(t)
	goPath, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "go is not on PATH: "+err.Error())
	}
	userCache := t.TempDir()
	t.Setenv("GOCACHE", userCache)
	t.Setenv("GOFLAGS", "-buildvcs=false")
	c := newCage(t, policy(t, profile.Read(dir)), cage.WithPresets(preset.Go))
	t.Cleanup(func() { _ = c.Close() }) // if the test ends early; Close is checked below
	build := func() (cache, out string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := c.Command(ctx, "/bin/sh", "-c", `"$0" env GOCACHE && "$0" build -x .`, goPath)
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build in the cage: %v\n%s", err, b)
		}
		first, rest, _ := strings.Cut(string(b), "\n")
		return first, rest
	}
	compiled := func(out string) bool { return strings.Contains(out, "-p example.com/tiny ") }
	cache1, out1 := build()
	cache2, out2 := build()
	if !strings.HasPrefix(cache1, cacheDirPrefix()) || cache1 != cache2 {
		t.Errorf("GOCACHE %q then %q: want the cage's cache (%s...) both times", cache1, cache2, cacheDirPrefix())
	}
	if !compiled(out1) || compiled(out2) {
		t.Errorf("the first build compiled the package: %v (want true); the second: %v (want false: a cache hit)\n%s\n---\n%s", compiled(out1), compiled(out2), out1, out2)
	}
	if ents, err := os.ReadDir(cache1); err != nil || len(ents) == 0 {
		t.Errorf("the cage's GOCACHE %s holds %d entries (%v)", cache1, len(ents), err)
	}
	emptyDir(t, "the caller's GOCACHE", userCache)

	// Two builds at once share it as well (the go command locks its cache).
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			cmd := c.Command(context.Background(), goPath, "build", "-a", ".")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("a concurrent go build -a: %v\n%s", err, out)
			}
		})
	}
	wg.Wait()

	running := c.Command(context.Background(), "/bin/sleep", "60")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err == nil {
		t.Error("Close with a run not waited for: nil error")
	}
	if _, err := os.Stat(cache1); err != nil {
		t.Errorf("a refused Close removed the caches: %v", err)
	}
	_ = running.Kill()
	_ = running.Wait()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(cache1)); !os.IsNotExist(err) {
		t.Errorf("the cage's caches %s are still there after Close (%v)", filepath.Dir(cache1), err)
	}
	if err := c.Command(context.Background(), "/bin/true").Run(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Start after Close: %v, want the cage is closed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestPresetPython: python3 (through pyenv's shim where that is what PATH
// finds) runs a test script importing a module and ssl's default context
// (the CA certificates); bytecode goes to the private prefix, not next to
// the read-only sources. pytest runs it too where it is installed.
func TestPresetPython(t *testing.T) {
	dir := presetProject(t, map[string]string{
		"mod.py": "def add(a, b):\n    return a + b\n",
		"test_mod.py": "import os, ssl, sys\nimport mod\n\n" +
			"def test_add():\n    assert mod.add(2, 3) == 5\n\n" +
			"def test_ssl():\n    assert ssl.create_default_context().cert_store_stats()['x509_ca'] > 0\n\n" +
			"if __name__ == '__main__':\n    test_add(); test_ssl()\n" +
			"    print('PIP_CACHE_DIR=' + os.environ['PIP_CACHE_DIR'])\n    print('prefix=' + sys.pycache_prefix)\n",
	})
	out, err := presetRun(t, dir, []preset.Preset{preset.Python}, nil, "python3", "test_mod.py")
	if err != nil {
		t.Fatalf("python3 test_mod.py in the cage: %v\n%s", err, out)
	}
	var pip, prefix string
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(line, "PIP_CACHE_DIR="); ok {
			pip = v
		}
		if v, ok := strings.CutPrefix(line, "prefix="); ok {
			prefix = v
		}
	}
	privateDir(t, "PIP_CACHE_DIR", pip)
	privateDir(t, "PYTHONPYCACHEPREFIX", prefix)
	if _, err := os.Stat(filepath.Join(dir, "__pycache__")); !os.IsNotExist(err) {
		t.Errorf("__pycache__ written next to the sources (err %v)", err)
	}
	if exec.Command("python3", "-c", "import pytest").Run() == nil {
		out, err := presetRun(t, dir, []preset.Preset{preset.Python}, nil, "python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mod.py")
		if err != nil || !strings.Contains(out, "2 passed") {
			t.Errorf("pytest in the cage: %v\n%s", err, out)
		}
	} else {
		t.Log("pytest is not installed: python3 ran the script alone")
	}
}

// TestPresetC: make and gcc compile a C file including <stdio.h> under
// preset.C; without the preset the header is not readable.
func TestPresetC(t *testing.T) {
	dir := presetProject(t, map[string]string{
		"hello.c":  "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
		"Makefile": "all:\n\tgcc -o \"$$TMPDIR/hello\" hello.c\n\ttest -s \"$$TMPDIR/hello\"\n\techo built\n",
	})
	if _, err := exec.LookPath("gcc"); err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "gcc is not on PATH: "+err.Error())
	}
	out, err := presetRun(t, dir, []preset.Preset{preset.C}, nil, "make")
	if err != nil || !strings.Contains(out, "built") {
		t.Fatalf("make in the cage: %v\n%s", err, out)
	}
	// The control: the same run without the preset's headers.
	c := newCage(t, policy(t, profile.Read(dir), profile.Fork()), cage.WithPrivateTemp())
	make, _ := exec.LookPath("make")
	cmd := c.Command(context.Background(), make)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "/usr/include/") {
		t.Errorf("make without preset.C: err %v, want a header under /usr/include refused\n%s", err, out)
	}
}

// TestPresetNode: npm test runs a script with node under preset.Node, with
// a private npm cache.
func TestPresetNode(t *testing.T) {
	dir := presetProject(t, map[string]string{
		"package.json": `{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node test.js"}}` + "\n",
		"test.js": "const assert = require('assert');\nassert.strictEqual(1 + 1, 2);\n" +
			"console.log('cache=' + process.env.npm_config_cache);\n",
	})
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "node is not on PATH: "+err.Error())
	}
	out, err := presetRun(t, dir, []preset.Preset{preset.Node}, nil, "npm", "test")
	if err != nil {
		t.Fatalf("npm test in the cage: %v\n%s", err, out)
	}
	_, after, ok := strings.Cut(out, "cache=")
	if !ok {
		t.Fatalf("npm test printed no cache:\n%s", out)
	}
	privateDir(t, "npm_config_cache", strings.Fields(after)[0])
}

// TestPresetRust: cargo builds a tiny crate under preset.Rust with a
// private CARGO_HOME.
func TestPresetRust(t *testing.T) {
	dir := presetProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		// The project is read-only: cargo --locked finds the lock file it
		// would otherwise write.
		"Cargo.lock": "version = 3\n\n[[package]]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
	})
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "main.rs"), []byte("fn main() { println!(\"{}\", std::env::var(\"CARGO_HOME\").unwrap()); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("cargo"); err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "cargo is not on PATH: "+err.Error())
	}
	out, err := presetRun(t, dir, []preset.Preset{preset.Rust}, nil, "sh", "-c", `cargo run -q --offline --locked --target-dir "$TMPDIR/target"`)
	if err != nil {
		t.Fatalf("cargo run in the cage: %v\n%s", err, out)
	}
	privateDir(t, "CARGO_HOME", out)
}

// TestPresetGit: git reads the user's configuration under preset.Git.
func TestPresetGit(t *testing.T) {
	home := tempHome(t)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Preset Test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	dir := presetProject(t, nil)
	out, err := presetRun(t, dir, []preset.Preset{preset.Git}, nil, "git", "config", "--global", "user.name")
	if err != nil || strings.TrimSpace(out) != "Preset Test" {
		t.Fatalf("git config in the cage: %v\n%s", err, out)
	}
	out, err = presetRun(t, dir, []preset.Preset{preset.Git}, nil, "git", "config", "--global", "user.name", "Changed")
	if err == nil {
		t.Errorf("git config --global set in the cage succeeded:\n%s", out)
	}
}

// TestPresetOption: WithPresets adds the preset's rules to the cage's
// policy, discovered from the home directory WithHome names; a Cmd.Env
// naming a cache variable keeps its value, as it keeps TMPDIR; an unknown
// preset is refused.
func TestPresetOption(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	gitconfig := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(gitconfig, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t), cage.WithHome(home), cage.WithPresets(preset.Git, preset.Go))
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	want := profile.FSRule{Access: profile.AccessRead, Target: profile.Literal, Path: gitconfig}
	if rules := c.Policy().FSRules(); !slices.Contains(rules, want) || !c.Policy().Forking() {
		t.Errorf("policy rules %v: want %v and fork (preset go)", rules, want)
	}
	cmd := c.Command(context.Background(), "/bin/sh", "-c", `echo "$GOCACHE $TMPDIR"`)
	cmd.Env = []string{"GOCACHE=/explicit"}
	out, err := cmd.Output()
	if f := strings.Fields(string(out)); err != nil || len(f) != 2 || f[0] != "/explicit" {
		t.Errorf("explicit GOCACHE: %q, %v; want /explicit and the private TMPDIR", out, err)
	}
	if _, err := cage.New(policy(t), cage.WithPresets("cobol")); err == nil {
		t.Error("WithPresets(\"cobol\") accepted")
	}
}
