package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestExplainThroughLink: explain asked about a path through a symbolic
// link (/tmp and /var on macOS, in the simulated Mac off macOS) answers for
// the path the kernel checks, under /private. The policy grants only the
// /private spelling, so an answer for the path as asked would be "denied by
// default".
func TestExplainThroughLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		resolved string // the kernel spelling explain must announce
		want     string // in the decision line
	}{
		{"read through link", []string{"--read", "/private/tmp/real", "file-read-data", "/tmp/real/f"},
			0, "/private/tmp/real/f", `(subpath "/private/tmp/real")`},
		{"write through link", []string{"--read", "/private/tmp/real", "file-write-data", "/tmp/real/f"},
			1, "/private/tmp/real/f", "denied by default"},
		{"socket through link", []string{"--unix-socket", "/private/var/run/s.sock", "network-outbound", "/var/run/s.sock"},
			0, "/private/var/run/s.sock", `(path-literal "/private/var/run/s.sock")`},
		{"directory link", []string{"--write", "/private/tmp/w", "file-write-data", "/tmp/w/"},
			0, "/private/tmp/w", `(subpath "/private/tmp/w")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"explain", "--backend", "macos"}, tc.args...)
			var out, errb bytes.Buffer
			code := run(args, &out, &errb)
			if code != tc.code {
				t.Errorf("%v: exit %d, want %d; stdout %q, stderr %q", args, code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), " is "+tc.resolved+" to the kernel") {
				t.Errorf("%v does not say it resolved the path to %s:\n%s", args, tc.resolved, out.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, tc.want) {
				t.Errorf("%v: decision %q, want it to mention %q", args, last, tc.want)
			}
		})
	}
}
