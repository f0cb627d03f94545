// Package linuxsandbox lowers a procage policy to Linux's Landlock and
// seccomp and prepares what a forked child needs to put them in force:
//
//	pl, err := linuxsandbox.Lower(policy, linuxsandbox.Env{Home: home, ABI: linuxsandbox.KernelABI()})
//	if err != nil {
//		return err // a *GapError names each part Linux cannot enforce
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
// spelling, which the cage resolves and checks for links first.)
//
// The lowering (Lower, Plan, its String and JSON, Filter) is portable, so
// a Linux plan can be previewed on any OS; the filter is assembled with
// golang.org/x/net/bpf and unit-tested in its VM. The enforcement
// (OpenRules, BuildRuleset, BuildProgram, NewCalls, KernelABI) is
// Linux-only.
//
// # Limitations
//
//   - Landlock only adds access: a deny inside an allowed tree, loopback
//     addresses, a Unix socket by path (before ABI 9), Mach names, raw
//     Seatbelt rules and exec-target-only are gaps ([Gap]): refused unless
//     accepted, and then not enforced.
//   - Landlock does not restrict stat, chmod, chown, utime, setxattr or
//     flock; UDP is not controlled before ABI 10.
//   - Rights of Landlock ABIs newer than [MaxABI] are not handled.
//   - The seccomp filter knows the amd64 and arm64 system call tables only,
//     as of the x/sys version reviewed (sysclass.go); a newer system call
//     answers ENOSYS.
package linuxsandbox
