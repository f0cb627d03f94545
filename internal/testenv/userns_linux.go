package testenv

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// RequireUserNamespace skips the test when the caller is not root and the
// kernel refuses it a user namespace, which tier T1 needs: checked with
// the standard library's own CLONE_NEWUSER fork of /bin/true. The kernel
// refuses one to a chrooted process (EPERM: create_user_ns in
// kernel/user_namespace.c), as .ci/kernel-matrix's guest is; elsewhere a
// refusal is the host's policy (Docker's seccomp profile, Ubuntu's
// AppArmor restriction). Root's T1 needs only a mount namespace.
func RequireUserNamespace(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() == 0 {
		return
	}
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}},
	}})
	if err != nil {
		Skip(tb, ReasonNoUserNamespace, fmt.Sprintf("unshare(CLONE_NEWUSER) as uid %d: %v", os.Geteuid(), err))
		return
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
}
