package tests

import (
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// TestRTPerfT1Pid1Unreachable: a T1 run's pid 1 is a copy of the caller
// (its memory, environment and descriptors, a proxy credential among them
// in the product), and since the vfork target the target shared its memory
// until exec. After exec, even with /proc readable by a rule, the target
// reaches none of pid 1: its memory, environment, descriptors, maps and
// executable are refused (its fd directory lists only its own pidfd and signalfd) (Landlock's ptrace scoping: pid 1 is outside the
// target's domain), while its own (/proc/self, pid 2) read, so the refusal
// is not the filesystem rule's.
func TestRTPerfT1Pid1Unreachable(t *testing.T) {
	requireT1(t)
	needPython(t)
	c := newCage(t, policy(t, profile.Read("/proc")), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	// Root's /proc is read-only at T1 where its metadata calls are allowed
	// (procfs keeps one mode per file for every mount), so a read-write
	// open stops there first.
	rw := "EACCES"
	if rootMetaLifted() {
		rw = "EROFS"
	}
	for code, want := range map[string]string{
		"r(0 if os.getpid() == 2 else -1)":               "ok", // the target is pid 2
		"r(len(open('/proc/self/environ','rb').read()))": "ok",
		"r(len(os.listdir('/proc/self/fd')))":            "ok",
		"r(os.open('/proc/self/mem', os.O_RDONLY))":      "ok",
		"r(len(open('/proc/1/environ','rb').read()))":    "EACCES",
		"r(os.open('/proc/1/mem', os.O_RDONLY))":         "EACCES",
		"r(os.open('/proc/1/mem', os.O_RDWR))":           rw,
		// The fd directory lists (DAC only, proc_fd_permission): pid 1 has
		// closed all but its pidfd and signalfd. What they are is refused.
		"r(len(os.listdir('/proc/1/fd')) - 2)":     "ok",
		"r(len(os.readlink('/proc/1/fd/0')))":      "EACCES",
		"r(len(os.readlink('/proc/1/exe')))":       "EACCES",
		"r(len(open('/proc/1/maps','rb').read()))": "EACCES",
		"r(len(os.readlink('/proc/1/cwd')))":       "EACCES",
		"r(os.open('/proc/1/fd/0', os.O_RDONLY))":  "EACCES",
		"r(libc.ptrace(16, 1, 0, 0))":              "EPERM", // PTRACE_ATTACH
		"r(libc.syscall(310, 1, 0, 0, 0, 0, 0))":   "EPERM", // process_vm_readv
	} {
		if got := pyProcErrno(t, c, code); got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
}

// pyProcErrno is pyErrno for code that raises OSError on a refusal: it
// prints "ok" for a result >= 0, else the errno's name.
func pyProcErrno(t *testing.T, c *cage.Cage, code string) string {
	t.Helper()
	return pyErrno(t, c, "try:\n    "+code+"\nexcept OSError as x:\n    print(errno.errorcode[x.errno])")
}
