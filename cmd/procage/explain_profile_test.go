package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeProfile writes an SBPL profile to a file and returns its path.
func writeProfile(t *testing.T, src string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.sb")
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// homebrewShape (testdata/homebrew-shape.sb, also the README's example)
// has the shape of Homebrew's SEATBELT template
// (Library/Homebrew/extend/os/mac/sandbox.rb): (debug deny), filtered
// allows of file-write*, file-write-setugid and file-write-mode per
// writable path, then unfiltered denies of the same three operations, then
// (allow default). Homebrew's macOS tests (Library/Homebrew/test/
// sandbox_spec.rb: "#allow_write", "allows chmod on a path allowed to
// write", "allows chmod 4000 on a path allowed to write", "formula does a
// chmod to opt") expect the writes and chmods under the allowed path to
// succeed and a chmod elsewhere to fail.
const homebrewShape = "testdata/homebrew-shape.sb"

func TestExplainProfile(t *testing.T) {
	brew := homebrewShape
	alias := writeProfile(t, `(version 1)
(deny default)
(allow iokit-open (iokit-frobnicator-class "RootDomainUserClient"))
(allow ipc-posix-shm-frobnicate)
(allow file-read* (subpath "/usr/lib"))
(allow file-read* (subpath (param "ROOT")))
`)
	// The shape of Nix's sandbox-defaults.sb (NixOS/nix
	// src/libstore/unix/build/sandbox-defaults.sb): a define of a
	// parameter, and local networking only when a parameter is set.
	nix := writeProfile(t, `(version 1)
(define TMPDIR (param "_GLOBAL_TMP_DIR"))
(deny default)
(deny file-write-setugid)
(allow file* process-exec (subpath TMPDIR))
(if (param "_ALLOW_LOCAL_NETWORKING")
    (begin
      (allow network* (remote ip "localhost:*"))))
`)
	tests := []struct {
		name string
		args []string
		code int
		out  string // a substring of stdout (or of stderr for code 2)
	}{
		{"homebrew: allowed write", []string{"--profile", brew, "file-write-data", "/private/tmp/build/x"}, 0, "allowed by " + brew + ":9: (allow file-write* (subpath \"/private/tmp/build\"))"},
		{"homebrew: chmod on an allowed path", []string{"--profile", brew, "file-write-mode", "/private/tmp/build/x"}, 0, "allowed by " + brew + ":11"},
		{"homebrew: chmod 4000 on an allowed path", []string{"--profile", brew, "file-write-setugid", "/private/tmp/build/x"}, 0, "allowed by " + brew + ":10"},
		{"homebrew: chmod elsewhere", []string{"--profile", brew, "file-write-mode", "/opt/homebrew"}, 1, "denied by " + brew + ":15: (deny file-write-mode)"},
		{"homebrew: denied write elsewhere", []string{"--profile", brew, "file-write-data", "/Users/me/x"}, 1, "denied by " + brew + ":13: (deny file-write*)"},
		{"homebrew: reads stay open", []string{"--profile", brew, "file-read-data", "/Users/me/x"}, 0, "allowed by " + brew + ":16: (allow default)"},
		{"homebrew: the readings disagree", []string{"--profile", brew, "file-write-data", "/private/tmp/build/x"}, 0, "; unsettled: if Seatbelt follows unfiltered-last, denied by " + brew + ":13\n"},
		{"unknown alias: unrelated read decided", []string{"--profile", alias, "file-read-data", "/usr/lib/libc.dylib"}, 0, alias + ":5"},
		{"unknown alias: unrelated read denied", []string{"--profile", alias, "file-read-data", "/etc/passwd"}, 1, alias + ":2: (deny default)"},
		{"param bound", []string{"--profile", alias, "--param", "ROOT=/opt/r", "file-read-data", "/opt/r/x"}, 0, alias + ":6"},
		{"param unbound", []string{"--profile", alias, "file-read-data", "/opt/r/x"}, 1, alias + ":2"},
		{"unknown filter could decide", []string{"--profile", alias, "iokit-open-user-client", "RootDomainUserClient"}, exitFailure, alias + ":3"},
		{"unknown operation could decide", []string{"--profile", alias, "ipc-posix-shm-read-data", "x"}, exitFailure, alias + ":4"},
		{"nix: build dir write", []string{"--profile", nix, "--param", "_GLOBAL_TMP_DIR=/private/tmp/nix", "file-write-data", "/private/tmp/nix/x"}, 0, nix + ":5"},
		{"nix: setugid in the build dir", []string{"--profile", nix, "--param", "_GLOBAL_TMP_DIR=/private/tmp/nix", "file-write-setugid", "/private/tmp/nix/x"}, 1, "denied by " + nix + ":4"},
		{"nix: no local networking", []string{"--profile", nix, "network-outbound", "127.0.0.1:80"}, 1, nix + ":3"},
		{"nix: local networking", []string{"--profile", nix, "--param", "_ALLOW_LOCAL_NETWORKING=1", "network-outbound", "127.0.0.1:80"}, 0, "allowed by " + nix + ":8"},
		{"bad param", []string{"--profile", alias, "--param", "ROOT", "file-read-data", "/x"}, exitFailure, "NAME=VALUE"},
		{"missing file", []string{"--profile", filepath.Join(t.TempDir(), "none.sb"), "file-read-data", "/x"}, exitFailure, "--profile"},
		{"bad access", []string{"--profile", alias, "file-read-data", "relative"}, exitFailure, "absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"explain"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, out, errs)
			}
			got := out
			if tt.code == exitFailure {
				got = errs
			}
			if !strings.Contains(got, tt.out) {
				t.Errorf("output %q lacks %q", got, tt.out)
			}
		})
	}
}

// TestExplainProfileReadme runs the README's example (from the
// repository root, as written there).
func TestExplainProfileReadme(t *testing.T) {
	t.Chdir("../..")
	code, out, errs := runCLI(t, "explain", "--profile", "cmd/procage/testdata/homebrew-shape.sb", "file-write-data", "/private/tmp/build/x")
	if code != 0 || !strings.Contains(out, "allowed by cmd/procage/testdata/homebrew-shape.sb:9:") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestExplainProfileHelp(t *testing.T) {
	code, out, _ := runCLI(t, "explain", "--profile", "x", "--help")
	if code != 0 || !strings.Contains(out, "--param") || !strings.Contains(out, "exactly as written") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}
