// Package forkexec starts a child process that, with raw system calls only,
// sets itself up, applies a prepared sandbox profile, confirms it, consumes
// grant tokens, marks inherited descriptors close-on-exec and only then
// executes its target. If a step fails, the target never runs and Start
// returns a *StepError naming the step.
//
// The smallest use (Linux; on darwin Calls must also carry the apply and
// confirm calls built with MacSyscall, or Start refuses):
//
//	pid, err := forkexec.Start(&forkexec.Attr{
//		Path:  "/bin/true",
//		Args:  []string{"true"},
//		Files: []uintptr{0, 1, 2},
//	})
//	if err != nil {
//		return err // errors.As(err, &stepErr) names the failing step
//	}
//	status, err := forkexec.Wait(pid)
//
// # Steps
//
// The child runs, in order: [StepSession] (setsid, or setpgid(0, 0) when
// Attr.ProcessGroup is set; then the runtime's post-fork signal reset),
// [StepStdio] (syscall's two-pass dup2 shuffle, so fds 0..n-1 are
// Attr.Files), [StepDir], [StepNamespace] (Calls only: the
// user and mount namespaces, Linux tier T1), [StepPID] (Linux,
// Attr.PIDNamespace: see below), [StepRlimit], [StepApply],
// [StepConfirm], [StepConsume], [StepCloexec] and [StepExec]. After a step's built-in
// action, the Attr.Calls tagged with it run in order. A failure writes
// {step and the failing call's position, errno} (8 bytes, atomic on a
// pipe) to a close-on-exec status pipe and calls _exit; EOF on the pipe
// means execve succeeded. A call may store its return value in a prepared
// word ([Call.StoreResult]), take an argument from one at call time
// ([Call.ArgFrom]: an fd an earlier call opened) and fail its step with
// ESTALE unless a word it filled holds an expected value
// ([Call.WantEqual]: a fstat'ed dev and inode). On Linux, [RawCallExpect] builds a call that
// fails its step unless it returns an expected value or errno (the
// confirmation of a Landlock and seccomp child).
//
// Everything the child touches is allocated before fork; the child does not
// allocate, lock or grow its stack (the rules of syscall/exec_libc2.go).
// The runtime's fork hooks and syscall.ForkLock are used as the standard
// library uses them.
//
// # Pid namespace
//
// With Attr.PIDNamespace ([StartProc]), the first child runs
// the steps up to StepNamespace, then at StepPID unshares the pid
// namespace and forks, both times with CLONE_PARENT, the namespace's pid 1
// and then the target (pid 2), and exits. Where the fork is vfork
// (linux/amd64) the target is one too: it shares the first child's memory
// until it executes, so only pid 1 copies the caller's page tables; it
// then reports the pids and wakes pid 1 itself, first, so the first
// child's death while it waits for the exec loses nothing. The target starts its own
// session (or process group), mounts /proc if Attr.MountProc, runs the
// StepPID calls and the remaining steps. Both are the caller's children:
// the caller signals and waits for the target as for any child and sees
// its real status (a namespace's init cannot die of a signal it did not
// ask for, so it could not relay one). Pid 1 blocks every signal, sets
// PR_SET_PDEATHSIG(SIGKILL), reaps orphans, forwards other signals sent
// to it to the target, and exits when the target does, which makes the
// kernel kill the rest of the namespace (pid_namespaces(7)). The status
// pipe reports a failure of any of the three processes; EOF means the
// target executed and pid 1 watches it. Because PR_SET_PDEATHSIG fires
// when the parent thread exits (golang/go#27505), these forks run on one
// goroutine locked to its OS thread for the life of the process.
//
// # New-names supervisor
//
// A [SuperviseCall] (linux/amd64; Attr.PIDNamespace and Attr.MountProc
// required) forks, at its position among the calls, the run's new-names
// supervisor ([Supervisor]): a child that forks it and exits, so the
// target's program never has it as a child and the namespace's pid 1
// adopts it. The supervisor keeps the Landlock domain the target holds at
// that point and CAP_SYS_PTRACE alone, closes every descriptor but its
// socket, receives the listener of the seccomp filter the target installs
// later, and from then on performs every intercepted call that creates a
// name (seccomp_unotify(2)) on the parent directory it opened by handle,
// never answering SECCOMP_USER_NOTIF_FLAG_CONTINUE. Like the rest of the
// child it makes raw calls only, on memory prepared before the fork; the
// linker's nosplit check bounds its stack. Its policy (which names it
// refuses) is internal/linuxsandbox's and docs/linux-backend.md's.
//
// # RLIMIT_NOFILE
//
// Go raises its soft RLIMIT_NOFILE at start-up and keeps the original in an
// unexported variable. Unless Attr.Rlimits sets RLIMIT_NOFILE, a child of a
// process whose limit still has the shape Go gives it gets the OS default
// soft limit (Linux 1024, macOS 256) capped at the hard limit.
//
// # Limitations
//
//   - darwin forks with libc fork (atfork handlers run), as os/exec does; the
//     fork copies the parent's page tables. Linux/amd64 uses
//     clone(CLONE_VM|CLONE_VFORK) like os/exec; other Linux architectures use
//     a plain fork, which costs time proportional to the parent's heap.
//   - The child's RLIMIT_NOFILE restore is an approximation: an original soft
//     limit above the OS default is lowered to the default.
//   - Relies on runtime and syscall linknames (syscall.runtime_*Fork*,
//     syscall.rawSyscall, rawSyscall6) that the Go project keeps stable for
//     x/sys and others (go.dev/issue/67401).
//   - On darwin the descriptor list comes from proc_pidinfo(PROC_PIDLISTFDS),
//     taken before the profile applies; a truncated list falls back to an
//     fcntl loop over the child's fd table.
//   - A pid-namespace run forks pid 1 with a plain fork (it copies the
//     caller's page tables, a cost that grows with the heap), the target
//     too off linux/amd64, and needs pidfds (Linux 5.3+). The target must be pid 2 of
//     the fresh namespace, which holds as the first child forks nothing
//     else into it. A process that joins the namespace from outside
//     (setns) is not watched; seccomp should refuse setns in the run.
//   - The new-names supervisor's nosplit chain has no room for libfuzzer's
//     instrumentation: a fuzzing build (go test -fuzz) of a package that
//     links this one needs -tags=procage_nosupervisor, which leaves the
//     supervisor out (NewSupervisor then reports ErrNoSupervisor).
//   - The new-names supervisor costs each supervised spawn two more forks
//     (each copies the caller's page tables) and each intercepted creation
//     a round trip to it (tens of microseconds).
//   - The caller must reap every started child ([Wait], syscall.Wait4 or
//     os.FindProcess + Process.Wait).
//   - On linux/amd64 the spawning thread sits in its vfork, unpreemptible,
//     until the target executes, and with it every stop-the-world (a GC
//     cycle's start) waits: for the child's steps, not only its exec as with
//     os/exec. A step that waits on the caller's own goroutines (a path on a
//     FUSE file system this process serves) can deadlock it.
package forkexec
