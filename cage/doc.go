// Package cage runs a child process inside an OS sandbox, with an API
// shaped like os/exec:
//
//	policy, err := profile.New(profile.BaseV1, profile.Read("/tmp/build"))
//	if err != nil {
//		return err
//	}
//	c, err := cage.New(policy)
//	if err != nil {
//		return err
//	}
//	out, err := c.Command(ctx, "/bin/ls", "/tmp/build").Output()
//
// A [profile.Policy] says what the child may read, write and execute, and
// whether it may use the network or fork. [New] prepares it once for the
// host's backend (macOS: Seatbelt; Linux: Landlock and seccomp); every
// [Cage.Command] then starts a child that puts the sandbox in force on
// itself before it executes its target. The cage fails closed: if the
// sandbox cannot be put in force, the target never runs, and there is no
// fallback to running it unconfined.
//
// # Preparing a cage
//
// [New] resolves every policy path and the home directory to the spelling
// the kernel matches (on macOS /tmp/x becomes /private/tmp/x; symbolic
// links and firmlinks are followed; [Cage.Rewrites] lists each rewrite)
// and lowers the policy for its backend (on macOS with package
// profile/seatbelt): [Cage.Plan] returns the plan text, [Cage.SeatbeltPlan]
// the Seatbelt profile's rules in structured form.
// [WithBackend] plans for another OS's backend, so either plan can be
// previewed anywhere ([WithFS] resolves paths through a simulated macOS
// file system); such a cage only plans, and Start refuses it with an
// [*UnsupportedError]. The hard-deny classes protect the home directory
// that os.UserHomeDir reports; [WithHome] names another.
//
// A policy path or grant that resolves through a symbolic link inside a
// tree the policy grants, leading out of that tree, or through a link
// leading to its own ancestor, is a [*PolicyError] of kind [ErrSuspectLink]: that is what a link a
// caged child planted in an earlier run looks like (build/cache -> the
// home directory). Accept a link you trust with [AcceptLink].
//
// # Spawning
//
// [Cage.Command] returns a [Cmd]. Its child, using system calls only,
// starts a new session (or its own process group with [TTYInherit]), sets
// up descriptors 0, 1, 2 and [Cmd.ExtraFiles], changes to [Cmd.Dir], sets
// resource limits (RLIMIT_CORE 0 unless [WithCoreDumps], then
// [WithRlimits]), puts the sandbox in force
// ([StepApply]), confirms it ([StepConfirm]), takes the spawn's grants
// ([Grant], [StepConsume]), marks every other descriptor close-on-exec, and only
// then executes the target. If any step fails the target never runs and
// Start returns an [*ApplyError] naming the [Step]. On macOS each spawn
// also grants read-write the terminals its Stdin, Stdout or Stderr (an
// *os.File) is open on, and no other (the macOS profile names no terminal
// but /dev/tty); on Linux the inherited descriptors need no rule.
//
// Before the first spawn in a process, [Probe] checks that the host's
// backend works: a child under a sandbox that denies everything must be
// refused exec (EPERM from Seatbelt on macOS, EACCES from Landlock on
// Linux). Anything else is an [*UnsupportedError] naming what was seen.
//
// A run ends when Wait returns, its context is done ([Cmd.Cancel]), or
// [Cmd.Kill] is called: the child and its process group are killed, and
// the backend finds the run's other processes (a forking run's
// descendants, wherever they went) and kills them, in up to 64 rounds
// until none is found. Two runs of one cage end separately. What could not
// be ended or checked is reported by Wait and Kill ([ErrRunNotEnded]),
// never hidden behind the exit status.
//
// [Cmd] has os/exec's StdinPipe, StdoutPipe, StderrPipe, ExtraFiles,
// WaitDelay (with exec.ErrWaitDelay), Cancel and Environ, and resolves a
// relative Path such as "./script.sh" against Dir. Start may be called
// once, even after it failed. The environment: a nil Cmd.Env inherits the
// caller's variables minus secret-looking ones ([IsSecret]) or only those
// [WithEnvAllowlist] names; a non-nil Cmd.Env is passed exactly as written. [WithPrivateTemp] gives each run its own
// TMPDIR, granted read, write and execute and removed at its end.
// [WithPresets] adds what a toolchain needs (package
// github.com/procage-go/procage/preset: Go, Rust, Node, Python, C, git's
// configuration) and gives the cage's runs shared private caches for it
// (GOCACHE, the npm and pip caches), never the user's real ones, until
// [Cage.Close] removes them.
//
// # macOS
//
// What a Mac child gets, the Seatbelt (SBPL) profile ([Cage.Plan],
// [Cage.SeatbeltPlan]), is decided by package
// [github.com/procage-go/procage/profile/seatbelt]; this package compiles
// it once in-process through libsandbox, and the child applies it with the
// Sandbox policy's system calls. Preview the profile from any OS:
//
//	c, err := cage.New(policy, cage.WithBackend(cage.BackendMacOS))
//	if err != nil {
//		return err
//	}
//	fmt.Print(c.Plan()) // (version 1) (deny default) ...
//
// A policy is compiled once per cage and the bytecode reused, unless its
// profile has per-spawn parameters: a forking policy ([profile.Fork])
// binds a per-run marker, a [profile.ExecTargetOnly] policy binds the
// target's path and a cage with a private temporary directory
// ([WithPrivateTemp], [WithPresets]) binds that directory, where the run
// may execute what it wrote, so such a cage compiles on every spawn. New refuses
// with [ErrAlreadySandboxed] if the caller already runs under a Seatbelt
// profile (a nested profile would fail or be ignored: run the program
// outside the outer sandbox). Seatbelt matches paths case-insensitively on
// every volume, so an allow-type rule or grant on a case-sensitive volume
// is refused ([ErrCaseSensitive]). A profile over the compile limit is
// refused ([ErrTooManyRules], [WithCompileLimit]), and so is one
// libsandbox rejects ([ErrProfileRejected]). A forking run's processes
// are found by asking each of the user's processes whether its sandbox
// allows the run's marker and denies a sibling name.
//
// # Linux
//
// The Linux backend restricts the child with Landlock (file access, TCP
// ports, signal and abstract-socket scoping) and a seccomp filter (system
// calls), both built once per cage and applied by the child before exec;
// root in a cage also loses every capability. What the child gets, the
// plan ([Cage.LinuxPlan]), is decided by package
// [github.com/procage-go/procage/profile/linux]; this package puts it in
// force. Landlock only adds access, so a deny inside an allowed tree (the
// git hooks a writable tree may hold, secrets under a readable home)
// cannot be enforced: New refuses
// such a policy with a [*PolicyError] of kind [ErrGap] naming each part, unless the class is
// waived or the gap accepted by name ([AcceptGaps], or the policy's own
// profile.AcceptGaps); a [PlanOnly] cage shows the plan of such a policy,
// each refused part listed, for review. A kernel whose
// Landlock ABI is older than the plan needs (at T2 6, Linux 6.12, by
// default; at T1 any) is an [*UnsupportedError] naming the kernel.
//
//	build, err := os.MkdirTemp("", "build") // the run's writable tree
//	if err != nil {
//		return err
//	}
//	defer os.RemoveAll(build)
//	policy, err := profile.New(profile.BaseV1, profile.ReadWrite(build),
//		profile.Waive(profile.TrustHandoff)) // git hooks in build are writable
//	if err != nil {
//		return err
//	}
//	c, err := cage.New(policy) // the Landlock ruleset and seccomp filter: c.Plan(), c.LinuxPlan()
//	if err != nil {
//		return err
//	}
//	err = c.Command(ctx, "/bin/sh", "-c", `echo hi > "$1/out"`, "sh", build).Run()
//
// A forking run's processes cannot leave its process group (seccomp
// refuses setsid and setpgid), so the run ends by killing the group.
// docs/linux-backend.md maps each policy part to Landlock and seccomp.
//
// # Network by host name
//
// A policy naming hosts ([profile.AllowHosts]: mode [profile.NetworkProxy])
// gives each run an egress proxy of its own in the caller's process: Start
// starts it on a port of 127.0.0.1, gives the child HTTP_PROXY,
// HTTPS_PROXY, ALL_PROXY (socks5h) and NO_PROXY in both cases, and
// confines the child to that port; Wait stops it, and [Cmd.NetLog] is the
// run's record (host, port, method, verdict and rule, bytes each way). A
// refused request gets HTTP 403 (or a SOCKS5 refusal) naming the host and
// the flag that would allow it. The proxy URLs carry a random credential
// of the run (http://USER:PASS@127.0.0.1:PORT; SOCKS5 username/password,
// RFC 1929), without which the proxy answers 407: the run's processes
// read it from their environment, other local processes that find the
// port cannot use it. One proxy per run, not per cage: its
// record is the run's, and concurrent runs of one cage neither share nor
// reach each other's proxy. On macOS each spawn's profile is lowered and
// compiled with its run's port ((remote tcp "localhost:PORT"); [Cage.Plan]
// names port 1 in its place). On Linux today Landlock allows the proxy's
// port on any address, so the gap [profile.GapProxyDirect] must be
// accepted; the example runs there at tier T2 with it accepted, and on
// macOS as written (a Mac has no gaps):
//
//	policy, err := profile.New(profile.BaseV1, profile.AllowHosts("github.com"))
//	if err != nil {
//		return err
//	}
//	c, err := cage.New(policy, cage.AcceptGaps(profile.GapProxyDirect), cage.WithLinuxTier(cage.TierT2))
//	if err != nil {
//		return err
//	}
//	cmd := c.Command(ctx, "/usr/bin/curl", "-sS", "http://example.com/")
//	out, err := cmd.Output() // procage egress proxy: example.com:80 refused: ...; allow it with --allow-host example.com
//	log := cmd.NetLog()      // one record: denied GET example.com:80: no rule allows host example.com on port 80
//
// Clients that ignore the proxy variables (Node's fetch, Bun, Java's
// HttpClient) connect directly, which the cage refuses: they reach
// nothing.
//
// # Errors
//
// Three types and a few sentinels cover every refusal:
//
//   - [*PolicyError]: New or Start refuses the policy, an option or a
//     grant; its Kind ([ErrSuspectLink], [ErrCaseSensitive],
//     [ErrTooManyRules], [ErrProfileRejected], [ErrGap]) matches with
//     errors.Is;
//   - [*ApplyError]: the child failed a set-up step and the target never
//     ran (errors.Is(err, fs.ErrPermission) for a denied step);
//   - [*UnsupportedError]: this host cannot cage (errors.Is(err,
//     errors.ErrUnsupported));
//   - [ErrAlreadySandboxed], [ErrRunNotEnded] and [ErrTempNotRemoved].
//
// A target's non-zero exit is an *exec.ExitError. Error strings are short
// and fixed; test with errors.Is and errors.As, never with message text.
//
// # Limitations
//
//   - A cage for another OS's backend only plans; on an OS with no backend
//     Start always returns an [*UnsupportedError] and nothing runs.
//   - macOS: between finding a process of a run and killing it, that
//     process could exit and its pid be reused: kill(2) takes a pid, and
//     macOS has no process handle that would close that window.
//   - macOS: the private libsandbox interface may change with any release;
//     a missing symbol or failed probe is an [*UnsupportedError] naming the
//     build. The base profiles are curated for macOS 26.6.2.
//   - A nil entry in [Cmd.ExtraFiles] is refused (os/exec closes that
//     descriptor instead).
//   - Path resolution is a snapshot taken by New (grants: by Start).
//   - Linux: Landlock does not restrict stat, chmod, chown, utime or
//     setxattr; UDP is uncontrolled with the network on; socket(AF_UNIX)
//     is refused unless the policy allows a Unix socket (a gap before
//     Landlock ABI 9); Base V1 has no /proc.
//   - Linux, root: at tier T2 seccomp refuses every mode, owner and xattr
//     change (chmod +x, make with gcc, tar x fail in writable trees too).
//     At T1 they work there, and so that nothing the run holds is on a
//     host mount it could write, an *os.File given as Stdin, Stdout or
//     Stderr that is no pipe, socket or terminal is copied through a pipe
//     (the run cannot seek or stat it), such an entry in
//     [Cmd.ExtraFiles] is refused, and so is /dev/tty; the run's /proc
//     is read-only. Root holds no capability in the run: a chown to
//     another owner fails.
//   - No limit bounds a run's whole process tree (that needs a delegated
//     cgroup v2 subtree): [WithRlimits] bounds each process alone, and
//     RLIMIT_NPROC counts every process of the user.
package cage
