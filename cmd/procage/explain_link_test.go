package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplainThroughLink: explain asked about a path through a symbolic
// link answers for the path the kernel checks, the link's target. The
// policy grants only the target, so an answer for the link's own spelling
// would be "denied by default"; and a link into a hard-denied file is
// denied by the hard deny, not let through by the grant.
func TestExplainThroughLink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.MkdirAll(filepath.Join(real, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(dir, "hooks")
	if err := os.Symlink(filepath.Join(real, ".git", "hooks"), hooks); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		resolved string // the kernel spelling explain must announce
		want     string // in the decision line
	}{
		{"read through link", []string{"--read", real, "file-read-data", link + "/f"},
			0, real + "/f", `(subpath "` + real + `")`},
		{"write through link", []string{"--read", real, "file-write-data", link + "/f"},
			1, real + "/f", "denied by default"},
		{"hook through link", []string{"--write", real, "file-write-create", hooks + "/pre-commit"},
			1, real + "/.git/hooks/pre-commit", "(hard-deny)"},
		{"socket through link", []string{"--unix-socket", real + "/s.sock", "network-outbound", link + "/s.sock"},
			0, real + "/s.sock", `(path-literal "` + real + `/s.sock")`},
		{"directory link", []string{"--write", real, "file-write-data", link + "/"},
			0, real, `(subpath "` + real + `")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"explain"}, tc.args...), &out, &errb)
			if code != tc.code {
				t.Errorf("explain %v: exit %d, want %d; stdout %q, stderr %q", tc.args, code, tc.code, out.String(), errb.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if !strings.Contains(out.String(), " is "+tc.resolved+" to the kernel") {
				t.Errorf("explain %v does not say it resolved the path to %s:\n%s", tc.args, tc.resolved, out.String())
			}
			if last := lines[len(lines)-1]; !strings.Contains(last, tc.want) {
				t.Errorf("explain %v: decision %q, want it to mention %q", tc.args, last, tc.want)
			}
		})
	}
}
