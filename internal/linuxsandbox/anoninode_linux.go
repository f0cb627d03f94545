package linuxsandbox

import (
	"sync"

	"golang.org/x/sys/unix"
)

// AnonInodeSetattr reports a kernel that lets a descriptor change the mode
// and owner of the kernel's one anonymous inode (eventfd, epoll, timerfd,
// signalfd, inotify; pidfd before pidfs) or of a pidfd's inode, which
// other processes' descriptors share: Linux 6.15 refuses both with
// EOPNOTSUPP ("anon_inode: explicitly block ->setattr()", "pidfs: use
// anon_inode_setattr()"). It asks with fchmod to the mode the inode has,
// which changes nothing, and fails closed: any other answer is true.
var AnonInodeSetattr = sync.OnceValue(func() bool {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return true
	}
	defer unix.Close(efd)
	pfd, err := unix.PidfdOpen(unix.Getpid(), 0)
	if err != nil {
		return true
	}
	defer unix.Close(pfd)
	for _, fd := range []int{efd, pfd} {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || unix.Fchmod(fd, st.Mode&0o7777) != unix.EOPNOTSUPP {
			return true
		}
	}
	return false
})
