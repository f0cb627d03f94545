package libsandbox

// Library paths. Since macOS 11 both exist only inside the dyld shared cache;
// dlopen by path still works [inferred].
const (
	// LibsandboxPath holds the compiler. It is not re-exported by libSystem,
	// so it is dlopen'd by path. [reported: iOS18 decompile —
	// sandbox_init_with_parameters dlopens this path; Protonk notes; Darling]
	LibsandboxPath = "/usr/lib/libsandbox.1.dylib"
	// LibSystemPath re-exports libsystem_sandbox (checks, extensions, error
	// free) and libsystem_kernel (__mac_syscall) and libc (free).
	// [confirmed: go-sandbox imports sandbox_init / sandbox_free_error from it;
	// xnu libsyscall/Platforms/syscall.map for __mac_syscall]
	LibSystemPath = "/usr/lib/libSystem.B.dylib"
)

// Param binds a profile parameter, read in SBPL with (param "Key").
type Param struct{ Key, Value string }

// Extension classes for [Lib.IssueExtension]. The profile must name the class
// in an (extension "<class>") filter, or a consumed token grants nothing.
// [confirmed: Chromium uses the exported APP_SANDBOX_READ / _READ_WRITE
// constants; reported: Finch and the iOS18 decompile spell the strings]
const (
	ExtensionRead      = "com.apple.app-sandbox.read"
	ExtensionReadWrite = "com.apple.app-sandbox.read-write"
)

// FilterType is enum sandbox_filter_type, the public numbering of
// sandbox_check's filters (not the kernel's: kernelFilterKind maps them).
// [confirmed: WebKit SandboxSPI.h for None 0, GlobalName 2, XPCServiceName 12;
// reported: evelyneee/ellekit sandbox.h and other reverse-engineered headers
// for the rest]
type FilterType uint32

const (
	FilterNone                  FilterType = 0
	FilterPath                  FilterType = 1
	FilterGlobalName            FilterType = 2 // one outlier header says 3 [reported]
	FilterLocalName             FilterType = 3 // one empirical report says 17 [reported]
	FilterAppleEventDestination FilterType = 4
	FilterRightName             FilterType = 5
	FilterPreferenceDomain      FilterType = 6
	FilterKextBundleID          FilterType = 7
	FilterInfoType              FilterType = 8
	FilterNotification          FilterType = 9 // two arguments: not supported by Check
	FilterXPCServiceName        FilterType = 12
	FilterIOKitConnection       FilterType = 13 // not supported by Check
)

// CheckFlags are the public SANDBOX_CHECK_* bits OR'd into sandbox_check's
// type argument. [confirmed: WebKit SandboxSPI.h for NoReport, Canonical,
// NoFollow; reported: Finch for all six]
type CheckFlags uint32

const (
	CheckNoReport       CheckFlags = 0x40000000 // do not log the expected denial
	CheckCanonical      CheckFlags = 0x20000000
	CheckNoFollow       CheckFlags = 0x10000000
	CheckAllowApproval  CheckFlags = 0x08000000
	CheckPosixReadable  CheckFlags = 0x04000000
	CheckPosixWriteable CheckFlags = 0x02000000
)
