// Package cage runs a child process inside a macOS Seatbelt sandbox:
//
//	policy, err := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/build"))
//	if err != nil {
//		return err
//	}
//	c, err := cage.New(policy)
//	if err != nil {
//		return err
//	}
//	out, err := c.Command(ctx, "sh", "-c", "ls /tmp/build").Output()
//
// # Preparing a cage
//
// [New] refuses with [ErrAlreadySandboxed] if the caller is sandboxed
// (macOS), resolves every policy path and the home directory to the
// spelling the kernel matches (/tmp/x becomes /private/tmp/x; symbolic
// links and firmlinks are followed; [Cage.Rewrites] lists each rewrite),
// lowers the policy to a Seatbelt profile ([Cage.Plan], [Cage.PlanRules])
// and, on macOS, compiles it once. Seatbelt matches paths
// case-insensitively on every volume, so an allow-type rule (filesystem
// rule, Unix socket, Seatbelt-layer allow, grant) on a case-sensitive volume
// is a [*CaseSensitiveError]; a deny there is fine. Off macOS the host's
// own volumes are only described (no Seatbelt will enforce the plan there),
// so the refusal applies to a simulated view given with [WithFS].
//
// A policy path or grant that resolves through a symbolic link inside a
// tree the policy grants, leading out of that tree, or through a link
// leading to its own ancestor, is a [*LinkError]: that is what a link a
// caged child planted in an earlier run looks like (build/cache -> the
// home directory). Accept a link you trust with [AcceptLink].
//
// A policy is compiled once per cage and the bytecode reused for every
// spawn, unless its profile has per-spawn parameters: a forking policy
// ([profile.Fork]) binds a per-run marker and an [profile.ExecTargetOnly]
// policy binds the target's path, and parameters are consumed by the
// compiler, so such a policy is compiled on every spawn.
//
// New, Plan and Rewrites work on every OS, so a service can inspect a plan
// anywhere; [WithFS] resolves paths through a simulated macOS file system.
//
// # Spawning
//
// [Cage.Command] returns a [Cmd] shaped like os/exec.Cmd. Its child, using
// system calls only, starts a new session (or its own process group with
// [TTYInherit]), sets resource limits, applies the compiled profile,
// confirms that it is sandboxed, consumes the spawn's [Grant] tokens, marks
// every inherited descriptor close-on-exec, and only then executes the
// target. If any step fails the target never runs and Start returns an
// [*ApplyError] naming the step. The profile names no terminal but
// /dev/tty: each spawn grants read-write the terminals its Stdin, Stdout or
// Stderr (an *os.File) is open on, and no other.
//
// Before the first spawn in a process, [Probe] checks that the in-child
// apply works on this release (a (deny default) child of /usr/bin/true must
// not run its target); before the first forking spawn it checks the query
// that finds a run's processes. Either failing is an [*UnsupportedError]:
// there is no fallback to running unsandboxed.
//
// A forking run ends when Wait returns, its context is done, or
// [Cmd.Kill] is called: the cage lists the user's processes, asks each
// one's sandbox whether it allows the run's marker and denies a sibling
// name (only the run's processes answer that way, wherever they were
// reparented), and kills those, in up to 64 rounds until none is found.
// Two runs of one cage have different markers and end separately.
//
// The environment: a nil Cmd.Env inherits the caller's variables minus
// secret-looking ones ([EnvDropSecrets], [IsSecret]) or only those an
// [EnvAllowlist] names; a non-nil Cmd.Env is passed exactly as written.
// [WithPrivateTemp] gives each run its own TMPDIR, removed at its end.
//
// # Errors
//
// [ErrAlreadySandboxed], [*CaseSensitiveError], [*LinkError], [*LimitError],
// [*CompileError], [*ApplyError] (errors.Is(err, fs.ErrPermission) for a
// denied step) and [*UnsupportedError] (errors.Is(err,
// errors.ErrUnsupported)); a target's non-zero exit is an *exec.ExitError.
// Test with errors.Is and errors.As, never with message text.
//
// # Limitations
//
//   - Spawning works on macOS only; elsewhere Start returns an
//     [*UnsupportedError] and the target never runs.
//   - Between finding a process of a run and killing it, that process could
//     exit and its pid be reused: macOS has no process handle that would
//     close that window.
//   - A non-forking run needs no search: its profile denies process-fork,
//     so the child is its only process.
//   - The private libsandbox interface may change with any macOS release;
//     a missing symbol or failed probe is an [*UnsupportedError] naming the
//     macOS build. The base profiles are curated for macOS 26.6.2.
//   - The apply probe counts exec refused with EPERM or EACCES, or the
//     exec'd image killed by a signal, as working; any normal exit fails it.
//   - Path resolution is a snapshot taken by New (grants: by Start).
//
// # Nested sandboxes
//
// macOS refuses a second profile in a sandboxed process, and a cage inside
// another tool's sandbox (Codex, Claude Code, sandbox-exec) would inherit
// it. New detects this with the sandbox self check and returns
// [ErrAlreadySandboxed]; run the program outside the outer sandbox.
package cage
