#include "textflag.h"

// func doFork(flags uintptr) (pid uintptr, err syscall.Errno)
//
// clone(flags, newsp=0, parent_tid=0, child_tid=0, tls=0); SYS_clone is 56
// on linux/amd64 [confirmed: syscall/zsysnum_linux_amd64.go].
//
// Why CLONE_VM|CLONE_VFORK is safe here (the same shape as
// syscall.rawVforkSyscall in Go's asm_linux_amd64.s, written anew):
//   - The child shares the parent's memory and runs on the parent's stack,
//     while the calling parent thread sleeps until the child execs or exits.
//   - This function has no frame (NOFRAME) and pops its return address into
//     R12 before SYSCALL and pushes it back after, so the child's later
//     calls, which reuse the stack word holding the return address, cannot
//     redirect the parent's RET; each process has its own R12.
//   - The caller, forkAndExecInChild, is the frame the child keeps running
//     in and never returns from; the parent returns from it at once, using
//     only this function's results (written after it wakes) and its own
//     return address and saved frame pointer, which the child never writes.
//   - Frames the child pushes lie below the parent's stack pointer, on a
//     goroutine stack nobody else touches meanwhile: runtime_BeforeFork
//     holds m.locks and blocks signals, so the goroutine cannot be
//     preempted, scanned or moved.
//   - The child writes only integers into its own frame and into the
//     plan's fd array and its record buffer, which the parent never reads
//     back; runtime_AfterForkInChild touches only the child's signal state.
TEXT ·doFork(SB),NOSPLIT|NOFRAME,$0-24
	MOVQ	flags+0(FP), DI
	MOVQ	$0, SI
	MOVQ	$0, DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	$56, AX
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, pid+8(FP)
	NEGQ	AX
	MOVQ	AX, err+16(FP)
	RET
ok:
	MOVQ	AX, pid+8(FP)
	MOVQ	$0, err+16(FP)
	RET
