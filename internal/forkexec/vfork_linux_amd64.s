#include "go_asm.h"
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
//   - A pid namespace's target is a vfork child of this child, on the same
//     stack (vforkTarget); the parent's vfork wait ends with this child,
//     which a SIGKILL can end first, so the parent also waits for the
//     target to leave (vforkTID) before it touches the stack.
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
	CMPQ	AX, $0
	JEQ	back
	// The parent: its vfork wait ends when the first child ends, and a
	// first child killed while its own vfork target (pidnsFork) still runs
	// on this stack ends early. Until the kernel clears vforkTID (the
	// target executed or exited), wait on it, in registers only (SYSCALL
	// keeps BX): not even the PUSHQ below may touch the stack before.
	MOVQ	AX, BX
wait:
	MOVL	·vforkTID(SB), DX
	CMPL	DX, $0
	JEQ	waited
	LEAQ	·vforkTID(SB), DI
	MOVQ	$0, SI // FUTEX_WAIT, not private: the kernel's wake is shared
	MOVQ	$0, R10 // no timeout
	MOVQ	$202, AX // SYS_futex
	SYSCALL
	JMP	wait
waited:
	MOVQ	BX, AX
back:
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

// func vforkTarget(flags uintptr, fin *pidnsFinish) (pid uintptr, err syscall.Errno)
//
// The pid namespace's target as a vfork child of the first child (flags
// carry CLONE_VM|CLONE_VFORK|CLONE_PARENT and CLONE_PARENT_SETTID|
// CLONE_CHILD_CLEARTID on vforkTID, which doFork's caller waits on): it shares
// the first child's memory and stack, as the first child shares the
// caller's, and returns (0, 0) here the way doFork's child does; the
// kernel has stored its pid in vforkTID before it runs, and it writes the
// pids record and wakes pid 1 itself (pidnsFork). The first child sleeps
// until the target has executed or exited; by then the target has reused
// this stack, so the first child never returns into Go: it exits 0, or,
// where clone failed, with only its own registers (R13 = fin, which
// SYSCALL preserves) writes the pids record without a target
// {pidsTag | init<<16} and {StepPID, errno} to the status pipe and exits
// 253, as pidnsFork's Go code does. It pushes nothing and writes only
// fin.rec (an integer store in the plan).
TEXT ·vforkTarget(SB),NOSPLIT|NOFRAME,$0-32
	MOVQ	flags+0(FP), DI
	MOVQ	fin+8(FP), R13
	MOVQ	$0, SI
	LEAQ	·vforkTID(SB), DX // parent_tid
	LEAQ	·vforkTID(SB), R10 // child_tid
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	$56, AX // SYS_clone
	POPQ	R12
	SYSCALL
	CMPQ	AX, $0
	JEQ	target
	// The first child: AX is the target's pid, or -errno.
	CMPQ	AX, $0xfffffffffffff001
	JLS	done
	MOVQ	AX, BX
	NEGQ	BX // errno
	MOVQ	pidnsFinish_base(R13), AX
	MOVQ	AX, pidnsFinish_rec(R13)
	MOVQ	pidnsFinish_pipe(R13), DI
	LEAQ	pidnsFinish_rec(R13), SI
	MOVQ	$8, DX
	MOVQ	$1, AX // SYS_write
	SYSCALL
	MOVL	pidnsFinish_fail(R13), AX
	MOVL	AX, pidnsFinish_rec(R13)
	MOVL	BX, (pidnsFinish_rec+4)(R13)
	MOVQ	pidnsFinish_pipe(R13), DI
	LEAQ	pidnsFinish_rec(R13), SI
	MOVQ	$8, DX
	MOVQ	$1, AX // SYS_write
	SYSCALL
failexit:
	MOVQ	$253, DI
	MOVQ	$231, AX // SYS_exit_group
	SYSCALL
	JMP	failexit
done:
	MOVQ	$0, DI
	MOVQ	$231, AX // SYS_exit_group
	SYSCALL
	JMP	done
target:
	PUSHQ	R12
	MOVQ	$0, pid+16(FP)
	MOVQ	$0, err+24(FP)
	RET
