package linux

import (
	"strings"
)

// FSAccess is a set of Landlock filesystem rights, with the values of
// LANDLOCK_ACCESS_FS_* in include/uapi/linux/landlock.h (defined here so
// the plan builds on every OS). Each right's meaning is the kernel's
// (Documentation/userspace-api/landlock.rst, "Filesystem flags").
type FSAccess uint64

const (
	FSExecute    FSAccess = 1 << iota // execute a file (ABI 1)
	FSWriteFile                       // open a file for writing (ABI 1)
	FSReadFile                        // open a file for reading (ABI 1)
	FSReadDir                         // open a directory, list it (ABI 1)
	FSRemoveDir                       // remove an empty directory, rename one away (ABI 1)
	FSRemoveFile                      // unlink a file, rename one away (ABI 1)
	FSMakeChar                        // create a character device (ABI 1)
	FSMakeDir                         // create a directory (ABI 1)
	FSMakeReg                         // create a regular file (ABI 1)
	FSMakeSock                        // create a Unix socket file (ABI 1)
	FSMakeFifo                        // create a named pipe (ABI 1)
	FSMakeBlock                       // create a block device (ABI 1)
	FSMakeSym                         // create a symbolic link (ABI 1)
	FSRefer                           // link or rename a file into another directory (ABI 2)
	FSTruncate                        // truncate a file (ABI 3)
	FSIoctlDev                        // ioctl on a character or block device (ABI 5)
)

var fsNames = []string{
	"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
	"make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym",
	"refer", "truncate", "ioctl_dev",
}

// FSFileRights are the rights Landlock accepts on a rule whose path is not
// a directory (landlock_add_rule returns EINVAL for the others).
const FSFileRights = FSExecute | FSWriteFile | FSReadFile | FSTruncate | FSIoctlDev

// Named groups the lowering uses.
const (
	fsRead  = FSReadFile | FSReadDir
	fsExec  = FSExecute
	fsWrite = FSWriteFile | FSRemoveDir | FSRemoveFile | FSMakeDir | FSMakeReg | FSMakeSock |
		FSMakeFifo | FSMakeSym | FSRefer | FSTruncate
)

// fsRightsAt returns every filesystem right Landlock ABI abi knows
// (Documentation/userspace-api/landlock.rst, "Previous limitations").
func fsRightsAt(abi int) FSAccess {
	var a FSAccess
	switch {
	case abi >= 5:
		a = FSIoctlDev<<1 - 1
	case abi >= 3:
		a = FSTruncate<<1 - 1
	case abi == 2:
		a = FSRefer<<1 - 1
	case abi == 1:
		a = FSMakeSym<<1 - 1
	}
	return a
}

// String lists the rights by their Landlock names ("read_file|read_dir"),
// "none" for the empty set.
func (a FSAccess) String() string { return bitNames(uint64(a), fsNames) }

// NetAccess is a set of Landlock network rights (LANDLOCK_ACCESS_NET_*,
// ABI 4).
type NetAccess uint64

const (
	NetBindTCP    NetAccess = 1 << iota // bind a TCP socket to a port (ABI 4)
	NetConnectTCP                       // connect a TCP socket to a port (ABI 4)
)

// String lists the rights ("bind_tcp|connect_tcp"), "none" for the empty
// set.
func (a NetAccess) String() string { return bitNames(uint64(a), []string{"bind_tcp", "connect_tcp"}) }

// Scope is a set of Landlock scopes (LANDLOCK_SCOPE_*, ABI 6): what the
// restricted processes may not reach outside their domain.
type Scope uint64

const (
	ScopeAbstractUnixSocket Scope = 1 << iota // connect to abstract Unix sockets outside the domain
	ScopeSignal                               // signals to processes outside the domain
)

// String lists the scopes ("abstract_unix_socket|signal"), "none" for the
// empty set.
func (s Scope) String() string {
	return bitNames(uint64(s), []string{"abstract_unix_socket", "signal"})
}

func bitNames(v uint64, names []string) string {
	if v == 0 {
		return "none"
	}
	var parts []string
	for i, n := range names {
		if v&(1<<i) != 0 {
			parts = append(parts, n)
			v &^= 1 << i
		}
	}
	if v != 0 {
		parts = append(parts, "unknown")
	}
	return strings.Join(parts, "|")
}

// MaxABI is the newest Landlock ABI this package knows. A kernel offering
// a newer one is used at this level: rights added later are not handled.
const MaxABI = 7
