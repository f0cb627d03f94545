//go:build linux && amd64

package linuxsandbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The hand-kept amd64 table must name the kernel's numbers: a wrong one
// would silently point a rule at another system call. x/sys/unix has
// constants only for the build's architecture, so this runs on amd64.
func TestSyscallNumbersAMD64(t *testing.T) {
	want := map[string]uint32{
		"ioctl":              unix.SYS_IOCTL,
		"socket":             unix.SYS_SOCKET,
		"clone":              unix.SYS_CLONE,
		"fork":               unix.SYS_FORK,
		"vfork":              unix.SYS_VFORK,
		"ptrace":             unix.SYS_PTRACE,
		"syslog":             unix.SYS_SYSLOG,
		"setpgid":            unix.SYS_SETPGID,
		"setsid":             unix.SYS_SETSID,
		"personality":        unix.SYS_PERSONALITY,
		"pivot_root":         unix.SYS_PIVOT_ROOT,
		"acct":               unix.SYS_ACCT,
		"mount":              unix.SYS_MOUNT,
		"umount2":            unix.SYS_UMOUNT2,
		"swapon":             unix.SYS_SWAPON,
		"swapoff":            unix.SYS_SWAPOFF,
		"reboot":             unix.SYS_REBOOT,
		"iopl":               unix.SYS_IOPL,
		"ioperm":             unix.SYS_IOPERM,
		"init_module":        unix.SYS_INIT_MODULE,
		"delete_module":      unix.SYS_DELETE_MODULE,
		"quotactl":           unix.SYS_QUOTACTL,
		"lookup_dcookie":     unix.SYS_LOOKUP_DCOOKIE,
		"kexec_load":         unix.SYS_KEXEC_LOAD,
		"add_key":            unix.SYS_ADD_KEY,
		"request_key":        unix.SYS_REQUEST_KEY,
		"keyctl":             unix.SYS_KEYCTL,
		"unshare":            unix.SYS_UNSHARE,
		"perf_event_open":    unix.SYS_PERF_EVENT_OPEN,
		"fanotify_init":      unix.SYS_FANOTIFY_INIT,
		"name_to_handle_at":  unix.SYS_NAME_TO_HANDLE_AT,
		"open_by_handle_at":  unix.SYS_OPEN_BY_HANDLE_AT,
		"setns":              unix.SYS_SETNS,
		"process_vm_readv":   unix.SYS_PROCESS_VM_READV,
		"process_vm_writev":  unix.SYS_PROCESS_VM_WRITEV,
		"finit_module":       unix.SYS_FINIT_MODULE,
		"kexec_file_load":    unix.SYS_KEXEC_FILE_LOAD,
		"bpf":                unix.SYS_BPF,
		"userfaultfd":        unix.SYS_USERFAULTFD,
		"io_uring_setup":     unix.SYS_IO_URING_SETUP,
		"io_uring_enter":     unix.SYS_IO_URING_ENTER,
		"io_uring_register":  unix.SYS_IO_URING_REGISTER,
		"open_tree":          unix.SYS_OPEN_TREE,
		"move_mount":         unix.SYS_MOVE_MOUNT,
		"fsopen":             unix.SYS_FSOPEN,
		"fsconfig":           unix.SYS_FSCONFIG,
		"fsmount":            unix.SYS_FSMOUNT,
		"fspick":             unix.SYS_FSPICK,
		"clone3":             unix.SYS_CLONE3,
		"mount_setattr":      unix.SYS_MOUNT_SETATTR,
		"socketpair":         unix.SYS_SOCKETPAIR,
		"shmget":             unix.SYS_SHMGET,
		"shmat":              unix.SYS_SHMAT,
		"shmctl":             unix.SYS_SHMCTL,
		"semget":             unix.SYS_SEMGET,
		"semop":              unix.SYS_SEMOP,
		"semctl":             unix.SYS_SEMCTL,
		"msgget":             unix.SYS_MSGGET,
		"msgsnd":             unix.SYS_MSGSND,
		"msgrcv":             unix.SYS_MSGRCV,
		"msgctl":             unix.SYS_MSGCTL,
		"semtimedop":         unix.SYS_SEMTIMEDOP,
		"sched_setparam":     unix.SYS_SCHED_SETPARAM,
		"sched_setscheduler": unix.SYS_SCHED_SETSCHEDULER,
		"setpriority":        unix.SYS_SETPRIORITY,
		"sched_setaffinity":  unix.SYS_SCHED_SETAFFINITY,
		"ioprio_set":         unix.SYS_IOPRIO_SET,
		"prlimit64":          unix.SYS_PRLIMIT64,
		"sched_setattr":      unix.SYS_SCHED_SETATTR,
		"open":               unix.SYS_OPEN,
		"creat":              unix.SYS_CREAT,
		"chmod":              unix.SYS_CHMOD,
		"fchmod":             unix.SYS_FCHMOD,
		"chown":              unix.SYS_CHOWN,
		"fchown":             unix.SYS_FCHOWN,
		"lchown":             unix.SYS_LCHOWN,
		"mknod":              unix.SYS_MKNOD,
		"setxattr":           unix.SYS_SETXATTR,
		"lsetxattr":          unix.SYS_LSETXATTR,
		"fsetxattr":          unix.SYS_FSETXATTR,
		"removexattr":        unix.SYS_REMOVEXATTR,
		"lremovexattr":       unix.SYS_LREMOVEXATTR,
		"fremovexattr":       unix.SYS_FREMOVEXATTR,
		"openat":             unix.SYS_OPENAT,
		"mknodat":            unix.SYS_MKNODAT,
		"fchownat":           unix.SYS_FCHOWNAT,
		"fchmodat":           unix.SYS_FCHMODAT,
		"openat2":            unix.SYS_OPENAT2,
		"fchmodat2":          unix.SYS_FCHMODAT2,
		"setxattrat":         unix.SYS_SETXATTRAT,
		"removexattrat":      unix.SYS_REMOVEXATTRAT,
		"bind":               unix.SYS_BIND,
		"sendto":             unix.SYS_SENDTO,
		"sendmsg":            unix.SYS_SENDMSG,
		"sendmmsg":           unix.SYS_SENDMMSG,
		"setsockopt":         unix.SYS_SETSOCKOPT,
		"fcntl":              unix.SYS_FCNTL,
		"mq_open":            unix.SYS_MQ_OPEN,
		"mq_unlink":          unix.SYS_MQ_UNLINK,
		"mq_timedsend":       unix.SYS_MQ_TIMEDSEND,
		"mq_timedreceive":    unix.SYS_MQ_TIMEDRECEIVE,
		"mq_notify":          unix.SYS_MQ_NOTIFY,
		"mq_getsetattr":      unix.SYS_MQ_GETSETATTR,
	}
	for name, nr := range want {
		got, ok := ArchAMD64.Syscall(name)
		if !ok || got != nr {
			t.Errorf("ArchAMD64.Syscall(%q) = %d, %v; want %d (x/sys/unix)", name, got, ok, nr)
		}
	}
	if len(want) != len(ArchAMD64.syscalls) {
		t.Errorf("the table has %d names, the check %d: add the new ones here", len(ArchAMD64.syscalls), len(want))
	}
}
