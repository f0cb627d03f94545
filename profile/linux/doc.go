// Package linux decides what a Linux child gets: it lowers a procage
// policy to a Landlock ruleset and a seccomp filter, a [Plan] that can be
// read, printed and marshalled on any OS:
//
//	policy, err := profile.New(profile.BaseV1, profile.Read("/srv/data"))
//	if err != nil {
//		return err
//	}
//	pl, err := linux.Lower(policy, linux.Env{Env: profile.Env{Home: "/home/me"}})
//	if err != nil {
//		return err // a *profile.GapError names each part Linux cannot enforce (pl lists them, to review)
//	}
//	fmt.Print(pl) // json.Marshal(pl) for tools
//
// The plan is the whole decision. Package cage's Linux backend (through
// internal/linuxsandbox) only puts it in force: it opens the plan's paths,
// builds the ruleset and the filter from it, and has the child apply them
// before exec, adding nothing but a spawn's grants and private temporary
// directory ([Plan.WithSpawn]). Package profile/seatbelt is the macOS
// counterpart.
//
// What a plan holds:
//
//   - Path rules ([PathRule]) in layers: the Linux Base V1 (system programs,
//     libraries and configuration; nothing of the home directory, /tmp or
//     /proc), the policy's own rules, and per spawn its grants. Every
//     filesystem right the planned ABI knows is handled, so a right no rule
//     allows is denied.
//   - The hard-deny classes (profile.ProtectedTable): a rule on or beneath a
//     protected path loses the rights the class refuses there
//     ([Plan.Denied]); a protected path inside an allowed tree cannot be
//     carved out, which is a gap ([profile.Gap]).
//   - TCP port rules and Landlock scopes (signals and abstract Unix sockets
//     stay inside the run).
//   - Seccomp rules ([SeccompRule]): a deny list of what Landlock cannot
//     see (namespaces, other processes' memory, set-ID bits, sockets by
//     family), with a ceiling: a system call newer than the reviewed table
//     answers ENOSYS. [Filter] assembles them with golang.org/x/net/bpf for
//     [ArchAMD64] or [ArchARM64].
//
// [Plan.Decide] says what a plan does with one access ([ParseAccess] reads
// it from procage explain's words) and which rule decides: the Landlock
// rule granting each right, the hard-deny entry that took it, the seccomp
// rule refusing the call, the accepted gap it rests on.
//
// docs/linux-backend.md maps each policy part to its rules.
//
// # Limitations
//
//   - Landlock only adds access: a deny inside an allowed tree, loopback
//     addresses, a Unix socket by path (before ABI 9), Mach names, raw
//     Seatbelt rules and exec-target-only are gaps ([profile.Gap]): refused
//     unless accepted, and then not enforced.
//   - Landlock does not restrict stat, chmod, chown, utime, setxattr or
//     flock; UDP is uncontrolled with the network on (seccomp refuses UDP
//     sockets with the network off or loopback-only). Seccomp refuses mode,
//     owner and xattr changes only for a root caller ([Env].Root).
//   - Rights of Landlock ABIs newer than [MaxABI] are not handled.
//   - The seccomp filter knows the amd64 and arm64 system call tables only,
//     as of the x/sys version reviewed (sysclass.go); a newer system call
//     answers ENOSYS.
//   - Decide models the plan's one ruleset as written: a spawn's grants,
//     rules whose paths are missing when the ruleset is built, an outer
//     Landlock domain, file permissions and other LSMs are not in it; a
//     rename or link across directories (refer) is decided one directory
//     at a time.
//   - A plan names paths; it does not check them. Resolving links and
//     refusing one that redirects a rule is the caller's (package cage does
//     it with pathresolve before lowering, and again when opening).
package linux
