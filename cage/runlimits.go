package cage

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// RunLimits bound a run's whole process tree together, where rlimits
// ([WithRlimits]) bound each process alone (RLIMIT_NPROC counts every
// process of the user, not of the run).
type RunLimits struct {
	Processes int64 // most processes and threads at once (cgroup v2 pids.max); 0: no limit
	Memory    int64 // most bytes of memory (cgroup v2 memory.max); 0: no limit
}

// WithRunLimits asks for per-run process and memory limits, enforced by a
// cgroup v2 subtree of the run's own. procage does not create such
// cgroups yet, so [New] refuses this option on every host with an
// [*UnsupportedError] naming what the host has and lacks (on Linux: cgroup
// v2 with the pids and memory controllers delegated to a subtree the
// caller can write); a run never starts without limits it asked for.
func WithRunLimits(l RunLimits) Option {
	return optionFunc(func(c *config) error {
		if l.Processes < 0 || l.Memory < 0 {
			return fmt.Errorf("cage: WithRunLimits: negative limit (%d processes, %d bytes)", l.Processes, l.Memory)
		}
		if l.Processes == 0 && l.Memory == 0 {
			return errors.New("cage: WithRunLimits: no limit set")
		}
		c.runLimits = &l
		return nil
	})
}

// errRunLimits is New's refusal of WithRunLimits for backend b.
func errRunLimits(b Backend) error {
	build := b.String()
	if hostHasBackend && b == hostBackend {
		build = hostOSBuild()
	}
	what := "per-run process and memory limits (WithRunLimits)"
	if b == BackendMacOS {
		return &UnsupportedError{OSBuild: build, What: what + ": macOS has no cgroups (WithRlimits sets per-process limits)"}
	}
	what += " need cgroup v2 with the pids and memory controllers delegated to a writable subtree"
	if hostHasBackend && b == hostBackend {
		what += "; this host: " + hostCgroupStatus()
	}
	return &UnsupportedError{OSBuild: build, What: what + "; procage does not create per-run cgroups yet"}
}

// cgroupStatus describes what cgroup v2 offers the calling process for
// per-run limits (cgroups(7), Documentation/admin-guide/cgroup-v2.rst
// "Delegation"), from /proc/self/mountinfo (proc(5)), /proc/self/cgroup
// and the files read returns; writable reports whether a directory may be
// written (access(2) W_OK).
func cgroupStatus(mountinfo, self []byte, read func(string) ([]byte, error), writable func(string) bool) string {
	var v2, v2Root string
	var v1 []string // controllers mounted on cgroup v1
	for line := range bytes.Lines(mountinfo) {
		pre, post, ok := strings.Cut(strings.TrimSpace(string(line)), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		switch g[0] {
		case "cgroup2":
			if v2 == "" {
				v2, v2Root = f[4], f[3]
			}
		case "cgroup":
			for _, o := range strings.Split(g[2], ",") {
				if o == "pids" || o == "memory" {
					v1 = append(v1, o)
				}
			}
		}
	}
	if v2 == "" {
		return "no cgroup v2 file system is mounted"
	}
	var rel string
	for line := range bytes.Lines(self) {
		if s, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "0::"); ok {
			rel = s
		}
	}
	if rel == "" {
		return "cgroup2 is mounted at " + v2 + " but /proc/self/cgroup names no cgroup v2 group"
	}
	rel, ok := strings.CutPrefix(rel, strings.TrimSuffix(v2Root, "/"))
	if !ok {
		return "this process's cgroup v2 group is outside the mount at " + v2
	}
	dir := path.Join(v2, rel)
	b, err := read(path.Join(dir, "cgroup.controllers"))
	if err != nil {
		return "cgroup2 at " + v2 + ": " + err.Error()
	}
	have := strings.Fields(string(b))
	var missing []string
	for _, c := range []string{"pids", "memory"} {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		noun := "controller"
		if len(missing) > 1 {
			noun += "s"
		}
		s := fmt.Sprintf("cgroup2 at %s lacks the %s %s", v2, strings.Join(missing, " and "), noun)
		if len(have) == 0 {
			s += " (it has no controller)"
		} else {
			s += " (it has " + strings.Join(have, ", ") + ")"
		}
		if len(v1) > 0 {
			s += "; " + strings.Join(slices.Compact(slices.Sorted(slices.Values(v1))), " and ") + " are bound to cgroup v1 (a v1/v2 hybrid)"
		}
		return s
	}
	if !writable(dir) {
		return "the pids and memory controllers of " + dir + " are not delegated to this user (the group is not writable)"
	}
	return "cgroup v2 with pids and memory at " + dir + ", writable"
}
