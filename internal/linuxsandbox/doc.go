// Package linuxsandbox puts a Linux plan (package profile/linux, which
// decides what the child gets) in force: it opens the plan's paths, builds
// the Landlock ruleset and the seccomp program, and prepares the calls a
// forked child makes before exec:
//
//	pl, err := linux.Lower(policy, linux.Env{Env: profile.Env{Home: home}, ABI: linuxsandbox.KernelABI()})
//	if err != nil {
//		return err // a *profile.GapError names each part Linux cannot enforce
//	}
//	held, err := linuxsandbox.OpenRules(pl.Rules, spell) // each path opened once, no link followed
//	if err != nil {
//		return err
//	}
//	rs, err := linuxsandbox.BuildRuleset(pl, held) // landlock_create_ruleset + add_rule
//	if err != nil {
//		return err // an *ABIError names the kernel and the ABI needed
//	}
//	prog, err := linuxsandbox.BuildProgram(pl) // the seccomp filter
//	if err != nil {
//		return err
//	}
//	calls, err := linuxsandbox.NewCalls(pl, rs, prog, pl.Rules)
//	if err != nil {
//		return err
//	}
//	pid, err := forkexec.Start(&forkexec.Attr{Path: "/bin/true", Args: []string{"true"},
//		Files: []uintptr{0, 1, 2}, Calls: calls.Calls})
//	calls.KeepAlive()
//
// (TestEnforceBase runs this sequence; spell gives each rule's kernel
// spelling, which the cage resolves and checks for links first.) It adds
// no right of its own: what the child may do is the plan's. Package cage's
// Linux backend is its one user. Everything here is Linux-only.
//
// A plan of tier T1 ([linux.TierT1]) also gets [NamespaceCalls], prepared
// per spawn: the child's user and mount namespace and its mounts
// (read-only root, writable trees, git pins, hidden stores), run at
// forkexec.StepNamespace before the calls above; [Join] puts both lists in
// one. Where [NewNamesAvailable] says the host runs the new-names
// supervisor, a T1 spawn with a writable tree also gets a [NewNames]
// ([NewSpawnNames], [NewCallsSupervised]): the supervisor's outer Landlock
// layer, its start, the new-names filter (linux.NewNamesFilter) and the
// listener's handoff, and a confirmation that it answers.
//
// # Limitations
//
//   - A kernel whose Landlock ABI is older than the plan's MinABI is an
//     [*ABIError]; Landlock off (not built, not in lsm=) is ABI 0.
//   - A rule binds the inode its path names when OpenRules runs: a path
//     that does not exist then is skipped, and one that holds a symbolic
//     link or moved before it was confirmed is refused ([linux.ErrPathChanged]).
//   - A rule for one file that names a directory is refused
//     ([linux.ErrLiteralDirectory]): Landlock's file rights on a directory reach
//     every file beneath it.
//   - Capabilities are dropped from the bounding set only when the caller
//     holds CAP_SETPCAP or the plan is T1 (the child holds every
//     capability in its user namespace); every caller's effective,
//     permitted and ambient sets are cleared.
//   - At T1 a mount beneath a writable tree stays read-only, git
//     directories are found by a bounded walk ([FindGitDirs]) when the
//     caller asks, and a protected name that is a symbolic link is refused
//     ([ErrCannotProtect]).
//   - A T1 run's own network namespace ([NetNS]) listens for the caller on
//     127.0.0.1 only, at most the ports given (each a descriptor reserved
//     above the child's descriptor shuffle); a listener is fixed at spawn,
//     so a port the run should serve itself cannot be one of them.
package linuxsandbox
