//go:build darwin || linux

package libsandbox

// symbolID indexes symbols.
type symbolID int

const (
	symCompileString symbolID = iota
	symFreeProfile
	symCreateParams
	symSetParam
	symFreeParams
	symFreeError
	symCheck
	symExtensionIssueFile
	symExtensionConsume
	symExtensionRelease
	symFree
	symMacSyscall
	numSymbols
)

// whichLib says which of the two libraries a symbol is looked up in.
type whichLib int

const (
	inLibsandbox whichLib = iota
	inLibSystem
)

// symbols is every C symbol the project resolves, with its library
// [reported: iOS18 decompile, Darling's stubs; confirmed: go-sandbox for
// libSystem; signatures: Chromium seatbelt.cc, WebKit SandboxSPI.h]. The
// darwin canary resolves each entry.
var symbols = [numSymbols]struct {
	name string
	lib  whichLib
}{
	// [reported: iOS18 decompile dlsyms these from libsandbox.1; Darling export list]
	symCompileString: {"sandbox_compile_string", inLibsandbox},
	symFreeProfile:   {"sandbox_free_profile", inLibsandbox},
	symCreateParams:  {"sandbox_create_params", inLibsandbox},
	symSetParam:      {"sandbox_set_param", inLibsandbox},
	symFreeParams:    {"sandbox_free_params", inLibsandbox},
	// libsystem_sandbox via libSystem [reported: iOS18 decompile; confirmed:
	// go-sandbox for sandbox_free_error]
	symFreeError:          {"sandbox_free_error", inLibSystem},
	symCheck:              {"sandbox_check", inLibSystem},
	symExtensionIssueFile: {"sandbox_extension_issue_file", inLibSystem},
	symExtensionConsume:   {"sandbox_extension_consume", inLibSystem},
	symExtensionRelease:   {"sandbox_extension_release", inLibSystem},
	// libc, frees extension tokens [confirmed: Chromium seatbelt_extension.cc]
	symFree: {"free", inLibSystem},
	// libsystem_kernel [confirmed: xnu libsyscall/Platforms/syscall.map]
	symMacSyscall: {"__mac_syscall", inLibSystem},
}
