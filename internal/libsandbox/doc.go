// Package libsandbox binds the private macOS Seatbelt interface without cgo:
// libsandbox's compiler and libsystem_sandbox's checks and extensions,
// resolved at run time with purego, plus the raw __mac_syscall("Sandbox", …)
// argument blocks a forked child passes.
//
//	lib, err := libsandbox.Load()
//	if err != nil {
//		return err // *UnsupportedError: errors.Is(err, errors.ErrUnsupported)
//	}
//	code, err := lib.Compile(`(version 1)(deny default)`, nil)
//	if err != nil {
//		return err // *CompileError carries libsandbox's message
//	}
//	apply := libsandbox.NewApply(code) // before fork; the child passes apply.Arg()
//
// # Symbols
//
// Every C symbol is listed once, with its library, in symbols.go: the
// compiler and params functions come from /usr/lib/libsandbox.1.dylib
// (dlopen'd by path, never a load-time dependency), the rest from
// /usr/lib/libSystem.B.dylib. [Load] resolves all of them once; a missing one
// is an [*UnsupportedError] naming the symbol and the macOS build.
//
// # Compiling
//
// [Lib.Compile] copies the bytecode into Go memory and frees the C profile at
// once, frees the error string on every path, keeps parameter strings alive
// until the compile has returned (libsandbox does not copy them) and
// serialises compiles with a mutex. Bytecode is tied to the OS build: compile
// once per process, never persist it.
//
// # Checks and the variadic ABI
//
// sandbox_check is variadic. On darwin/arm64 variadic arguments go on the
// stack, while purego fills registers first, so a filter argument passed
// through purego would not be seen. The binding therefore calls sandbox_check
// only with SANDBOX_FILTER_NONE (no variadic argument) and sends filtered
// checks as Sandbox call 2 through the non-variadic __mac_syscall, using the
// same block ([NewCheck], [NewMarkerCheck]) the forked child uses. This avoids
// padding arguments to the ninth slot, which would depend on purego's and the
// platform's register counts.
//
// # Raw calls for the child
//
// calls.go holds the __mac_syscall number, the policy name and the call-0
// (apply), call-2 (check) and call-6 (consume) blocks. [NewApply],
// [NewSelfCheck], [NewMarkerCheck] and [NewConsume] build them in Go memory
// before fork; the child only passes [PolicyName] and the Arg pointers.
// purego itself must never be used after fork.
//
// # Limitations
//
//   - The interface is private and undocumented; layouts and call numbers come
//     from reverse engineering (see the source comments) and may change with
//     any macOS release. The darwin canary test resolves every symbol.
//   - Only string filters are supported by [Lib.Check]; integer and
//     two-argument filters are rejected with [ErrInvalidArgument].
//   - On linux the binding loads only test fakes; [Load] fails there. On other
//     systems every call returns an [*UnsupportedError].
//   - errno is captured on darwin only; elsewhere a failed call says so.
package libsandbox
