// Package sysnum holds the Linux system call numbers of amd64 and arm64,
// generated from golang.org/x/sys/unix, so a seccomp filter for either
// architecture can be built (and a Linux plan previewed) on any OS:
//
//	nr, ok := sysnum.ARM64.Nums["openat"] // 56, true
//
// zsysnum.go is generated from x/sys's zsysnum_linux_amd64.go and
// zsysnum_linux_arm64.go at the version go.mod requires, which x/sys
// makes from the kernel's asm/unistd.h
// (https://github.com/golang/sys/blob/master/unix/linux/mksysnum.go).
// After bumping x/sys, run
//
//	go generate ./internal/sysnum
//
// # Limitations
//
// Only amd64 and arm64, native ABI: no x32 or i386 compat numbers. A system
// call newer than the x/sys version is absent. Names are x/sys's constant
// names lowercased without SYS_, which are the kernel's __NR_ names
// (newfstatat, not fstatat); aliases are not added. arm64's
// arch_specific_syscall is the start of a reserved range, not a call.
package sysnum

//go:generate go run ./gen -o zsysnum.go

// Table is one architecture's system call numbers.
type Table struct {
	Arch   string // GOARCH
	Source string // the x/sys module and version it was generated from
	// Limit is one above the highest number, like the kernel's
	// __NR_syscalls; numbers below it may have holes.
	Limit uint32
	Nums  map[string]uint32 // name (as in unistd.h) to number
}
