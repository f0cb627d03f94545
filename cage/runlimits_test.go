package cage

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// cgroupStatus names what a host has and lacks for per-run limits, for the
// shapes hosts come in: this CI machine's v1/v2 hybrid, a unified
// hierarchy with and without delegation, none at all.
func TestCgroupStatus(t *testing.T) {
	hybrid := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	unified := "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	user := "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n"
	userDir := "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := m[p]; ok {
				return []byte(s), nil
			}
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
	}
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	cases := []struct {
		name, mountinfo, self string
		files                 map[string]string
		writable              func(string) bool
		want                  []string
	}{
		{"hybrid", hybrid, "9:name=systemd:/\n4:memory:/x\n0::/\n", map[string]string{"/sys/fs/cgroup/unified/cgroup.controllers": "hugetlb\n"}, yes,
			[]string{"cgroup2 at /sys/fs/cgroup/unified lacks the pids and memory controllers (it has hugetlb)", "memory and pids are bound to cgroup v1"}},
		{"hybrid, no controller", hybrid, "0::/\n", map[string]string{"/sys/fs/cgroup/unified/cgroup.controllers": "\n"}, yes,
			[]string{"(it has no controller)"}},
		{"unified, delegated", unified, user, map[string]string{userDir + "/cgroup.controllers": "cpu memory pids\n"}, yes,
			[]string{"cgroup v2 with pids and memory at " + userDir + ", writable"}},
		{"unified, not delegated", unified, user, map[string]string{userDir + "/cgroup.controllers": "cpu memory pids\n"}, no,
			[]string{"not delegated to this user"}},
		{"unified, pids only", unified, user, map[string]string{userDir + "/cgroup.controllers": "pids\n"}, yes,
			[]string{"lacks the memory controller (it has pids)"}},
		{"no cgroup2", "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", "0::/\n", nil, yes, []string{"no cgroup v2 file system is mounted"}},
		{"no v2 line", unified, "4:memory:/x\n", nil, yes, []string{"names no cgroup v2 group"}},
		{"unreadable", unified, user, nil, yes, []string{"cgroup2 at /sys/fs/cgroup: open " + userDir + "/cgroup.controllers"}},
	}
	for _, tc := range cases {
		got := cgroupStatus([]byte(tc.mountinfo), []byte(tc.self), files(tc.files), tc.writable)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q, want it to contain %q", tc.name, got, w)
			}
		}
	}
}

// WithRunLimits is refused by New, for every backend, by name; bad
// values are plain errors.
func TestRunLimitsRefused(t *testing.T) {
	for _, b := range []Backend{BackendLinux, BackendMacOS} {
		err := errRunLimits(b)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(ue.What, "WithRunLimits") {
			t.Errorf("%v: %v, want an *UnsupportedError naming WithRunLimits", b, err)
		}
		if b == BackendLinux && !strings.Contains(ue.What, "cgroup v2 with the pids and memory controllers delegated") {
			t.Errorf("%v: %q does not say what is missing", b, ue.What)
		}
	}
	for _, l := range []RunLimits{{}, {Processes: -1}, {Memory: -1, Processes: 5}} {
		var c config
		if err := WithRunLimits(l).apply(&c); err == nil || c.runLimits != nil {
			t.Errorf("WithRunLimits(%+v) accepted", l)
		}
	}
}
