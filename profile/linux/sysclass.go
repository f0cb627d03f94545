package linux

// Why a deny list with a ceiling, not an allowlist. The cage's confinement
// is Landlock; seccomp refuses what Landlock cannot see. An allowlist (as
// Docker's default profile, moby profiles/seccomp/default.json) would have
// to allow every call of every program an agent runs (compilers, language
// runtimes, shells, test suites) and answer EPERM to the rest, and a call
// it forgets breaks a program at run time, often in a way that looks like
// a bug in the program. What a filter must not do is let a new kernel
// widen the cage (file_setattr, Linux 6.17, set inode flags by path past
// the rule on FS_IOC_SETFLAGS). So: every system call this package knows
// of (golang.org/x/sys/unix at sysTableSource) is reviewed below as
// allowed, denied or conditional; the filter answers ENOSYS to every
// number above the highest one reviewed (Arch.ceiling), which libc and the
// Go runtime treat as "not on this kernel" and fall back from; and
// TestSyscallReview fails on any call of that x/sys version the review
// does not name, so bumping x/sys with a new call fails until it is
// classified and the ceiling raised.

// sysTableSource is the x/sys version whose system call tables
// (zsysnum_linux_amd64.go, zsysnum_linux_arm64.go) the review covers;
// TestSyscallReview checks it is internal/sysnum's, which that package's
// test keeps go.mod's.
const sysTableSource = "golang.org/x/sys v0.50.0"

// sysClass is how the filter treats a system call.
type sysClass uint8

const (
	// sysAllowed: reviewed, no rule. Landlock checks what matters in it,
	// or it reaches only the caller, or it needs a capability the cage
	// has dropped.
	sysAllowed sysClass = iota + 1
	// sysDenied: refused in every cage (EPERM, or ENOSYS where callers
	// fall back to an older call).
	sysDenied
	// sysConditional: refused for some policies or argument values.
	sysConditional
)

func (c sysClass) String() string {
	switch c {
	case sysAllowed:
		return "allowed"
	case sysDenied:
		return "denied"
	case sysConditional:
		return "conditional"
	}
	return "?"
}

// syscallReview classifies every system call of both architectures'
// tables (names as in the kernel's unistd.h), with why.
var syscallReview = []struct {
	class sysClass
	names string
	why   string
}{
	// Denied: see alwaysDenied and enosysDenied for each reason.
	{sysDenied, "ptrace process_vm_readv process_vm_writev io_uring_setup io_uring_enter io_uring_register " +
		"keyctl add_key request_key bpf perf_event_open userfaultfd setns " +
		"mount umount2 pivot_root mount_setattr move_mount open_tree open_tree_attr fsopen fsconfig fsmount fspick " +
		"kexec_load kexec_file_load init_module finit_module delete_module reboot swapon swapoff acct syslog " +
		"quotactl quotactl_fd iopl ioperm lookup_dcookie open_by_handle_at name_to_handle_at fanotify_init " +
		"file_setattr file_getattr listmount statmount listns uselib clone3 openat2",
		"refused in every cage (seccompRules)"},

	// Conditional: see seccompRules for each rule.
	{sysConditional, "clone unshare ioctl fcntl", "by flag or request: namespaces, CLONE_PARENT, fork-like clones of a non-forking policy; TIOCSTI, TIOCLINUX, TIOCSWINSZ, inode flags for root; F_SETLEASE"},
	{sysConditional, "chmod fchmod fchmodat fchmodat2 open openat creat mknod mknodat", "set-ID bits in the mode; the chmod family for root"},
	{sysConditional, "chown fchown lchown fchownat setxattr lsetxattr fsetxattr setxattrat removexattr lremovexattr fremovexattr removexattrat", "a root caller (Landlock has no right for owner or xattrs)"},
	{sysConditional, "prlimit64 sched_setaffinity sched_setscheduler sched_setparam sched_setattr setpriority ioprio_set", "process-access: the caller only"},
	{sysConditional, "shmget shmat shmctl semget semop semtimedop semctl msgget msgsnd msgrcv msgctl " +
		"mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr", "process-access: host-wide IPC objects"},
	{sysConditional, "fork vfork setsid setpgid", "by Fork(): no processes, or none leaving the run's group"},
	{sysConditional, "socket socketpair bind sendto sendmsg sendmmsg setsockopt", "by network mode: families, types, protocols, netlink protocols, TCP Fast Open; bind with no family"},

	// Allowed.
	{sysAllowed, "brk mmap munmap mremap mprotect madvise mincore msync mlock mlock2 mlockall munlock munlockall " +
		"remap_file_pages pkey_alloc pkey_free pkey_mprotect memfd_secret map_shadow_stack mseal membarrier " +
		"get_mempolicy set_mempolicy set_mempolicy_home_node mbind shmdt cachestat",
		"the caller's own memory"},
	{sysAllowed, "exit exit_group set_tid_address set_robust_list futex futex_wait futex_wake futex_requeue futex_waitv " +
		"rseq rseq_slice_yield rt_sigaction rt_sigprocmask rt_sigpending rt_sigsuspend rt_sigtimedwait rt_sigreturn " +
		"sigaltstack restart_syscall sched_yield sched_get_priority_max sched_get_priority_min sched_rr_get_interval " +
		"arch_prctl prctl set_thread_area get_thread_area personality modify_ldt getcpu " +
		"seccomp landlock_create_ruleset landlock_add_rule landlock_restrict_self lsm_get_self_attr lsm_set_self_attr lsm_list_modules",
		"the caller's own threads, signals, execution domain and restrictions (seccomp and Landlock only narrow; LSM attributes obey the LSM's own rules)"},
	{sysAllowed, "sched_getaffinity sched_getattr sched_getparam sched_getscheduler getpriority ioprio_get",
		"reads of scheduling values; of another process they are part of the process-enumeration gap (docs/linux-backend.md)"},
	{sysAllowed, "getpid getppid gettid getuid geteuid getgid getegid getresuid getresgid getgroups getpgid getpgrp getsid " +
		"setuid setgid setreuid setregid setresuid setresgid setfsuid setfsgid setgroups capget capset " +
		"umask getrlimit setrlimit getrusage times",
		"ids, credentials and limits of the caller: with no capability left (the apply step) they can only be dropped"},
	{sysAllowed, "execve execveat wait4 waitid", "Landlock checks execute at execve (memfd: the documented exec gap); waits see only children"},
	{sysAllowed, "kill tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo pidfd_send_signal",
		"signals: Landlock's signal scope keeps them inside the run (process-access class)"},
	{sysAllowed, "kcmp pidfd_getfd process_madvise migrate_pages move_pages get_robust_list pidfd_open process_mrelease",
		"another process only past a ptrace access check, which Landlock limits to the domain; pidfd_open itself grants nothing, process_mrelease only reaps a killed process"},
	{sysAllowed, "read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 lseek close close_range " +
		"dup dup2 dup3 pipe pipe2 sendfile splice tee vmsplice copy_file_range fsync fdatasync sync_file_range " +
		"fallocate ftruncate fadvise64 readahead getdents getdents64 fstat fstatfs fchdir " +
		"poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 " +
		"eventfd eventfd2 signalfd signalfd4 timerfd_create timerfd_gettime timerfd_settime " +
		"io_setup io_destroy io_submit io_getevents io_pgetevents io_cancel memfd_create",
		"descriptors already open: Landlock checked the open (memfd_create: the documented exec gap)"},
	{sysAllowed, "flock", "advisory locks on files the cage may open: only cooperating processes wait"},
	{sysAllowed, "truncate link linkat symlink symlinkat rename renameat renameat2 unlink unlinkat mkdir mkdirat rmdir chdir getcwd",
		"paths: Landlock checks the access"},
	{sysAllowed, "stat lstat newfstatat statx statfs ustat sysfs access faccessat faccessat2 readlink readlinkat " +
		"getxattr lgetxattr fgetxattr getxattrat listxattr llistxattr flistxattr listxattrat " +
		"utime utimes futimesat utimensat inotify_init inotify_init1 inotify_add_watch inotify_rm_watch fanotify_mark",
		"metadata Landlock does not restrict (landlock.h): the documented metadata, timestamp and inotify gaps; fanotify_mark needs fanotify_init's descriptor"},
	{sysAllowed, "time gettimeofday clock_gettime clock_getres clock_nanosleep nanosleep alarm getitimer setitimer pause " +
		"timer_create timer_delete timer_getoverrun timer_gettime timer_settime",
		"clocks and timers of the caller"},
	{sysAllowed, "settimeofday clock_settime adjtimex clock_adjtime chroot sethostname setdomainname vhangup",
		"setting needs a capability (CAP_SYS_TIME, CAP_SYS_CHROOT, CAP_SYS_ADMIN, CAP_SYS_TTY_CONFIG) the cage has dropped; reads are harmless"},
	{sysAllowed, "uname sysinfo getrandom sync syncfs", "host facts any process may read; flushing caches"},
	{sysAllowed, "connect accept accept4 listen getsockname getpeername getsockopt recvfrom recvmsg recvmmsg shutdown",
		"on sockets socket() allowed: Landlock checks TCP connect and bind (listen's implicit bind: the loopback gap)"},
	{sysAllowed, "_sysctl afs_syscall create_module get_kernel_syms query_module getpmsg putpmsg security tuxcall vserver " +
		"epoll_ctl_old epoll_wait_old nfsservctl arch_specific_syscall",
		"not implemented by the kernel (ENOSYS); arch_specific_syscall is arm64's range marker, no call"},
	{sysAllowed, "uretprobe uprobe", "amd64: only from a kernel-installed uprobe trampoline, else the kernel kills the caller"},
}
