package libsandbox

import (
	"fmt"
	"strings"
	"structs"
	"unsafe"
)

// The raw Sandbox system calls the forked child issues, and the argument
// blocks it passes. Everything here is built in ordinary Go memory before
// fork, so the child only hands pointers to __mac_syscall. None of it is
// documented by Apple: every value names its source and a marker
// (docs/sources.md explains both).

// SysMacSyscall is the BSD system call number of
// __mac_syscall(char *policy, int call, user_addr_t arg).
// [confirmed: xnu bsd/kern/syscalls.master; x/sys SYS___MAC_SYSCALL = 381 on
// darwin amd64 and arm64]
const SysMacSyscall = 381

// PolicyName is the NUL-terminated MAC policy name of Seatbelt, the first
// argument of __mac_syscall. An array, so &PolicyName[0] is a fixed address
// the child can pass without allocating.
// [reported: Protonk notes, Finch — sandbox_apply calls __sandbox_ms("Sandbox", 0, …);
// confirmed: the "Sandbox" policy name in Apple profiles' (mac-policy-name "Sandbox")]
var PolicyName = [8]byte{'S', 'a', 'n', 'd', 'b', 'o', 'x', 0}

// Call numbers of the "Sandbox" policy. [reported: Finch (macOS 26.4); each
// cross-checked by the independent source named beside it]
const (
	CallApply   = 0 // set profile from bytecode; also Protonk 14.4.1 trace
	CallCheck   = 2 // sandbox_check*; also Finch dyld shim, an obfuscator write-up
	CallConsume = 6 // extension consume; also Apple iOS profile allow-list
	CallRelease = 7 // extension release; also Apple iOS profile allow-list
)

// ApplyBlockSize is the size of the call-0 block. The observed block has four
// 8-byte fields (data, size, container, container length) [reported: Protonk
// notes {ptr, 416, 0}; Finch sandbox_apply_bytecode]; older releases read
// three or five [reported]. Eight zero-padded words cover every variant
// [inferred; needs a Mac].
const ApplyBlockSize = 8 * 8

// applyBlock is the call-0 argument. [reported: Protonk notes, Finch]
type applyBlock struct {
	_            structs.HostLayout
	data         *byte  // 0x00 bytecode
	size         uint64 // 0x08 bytecode length
	container    *byte  // 0x10 container path, NULL
	containerLen uint64 // 0x18 container path length with NUL, 0 when NULL
	_            [4]uint64
}

// ApplyCall is a prepared Sandbox call 0 (apply bytecode). It holds the
// bytecode and the block, so both stay alive as long as the ApplyCall does.
type ApplyCall struct {
	block    applyBlock
	bytecode []byte
}

// NewApply prepares call 0 for bytecode (a copy is kept). Empty bytecode gives
// a block with a NULL data pointer, which the kernel rejects.
func NewApply(bytecode []byte) *ApplyCall {
	c := &ApplyCall{bytecode: append([]byte(nil), bytecode...)}
	if len(c.bytecode) > 0 {
		c.block.data = &c.bytecode[0]
		c.block.size = uint64(len(c.bytecode))
	}
	return c
}

// Arg is the third argument of __mac_syscall("Sandbox", CallApply, arg).
func (c *ApplyCall) Arg() unsafe.Pointer { return unsafe.Pointer(&c.block) }

// CheckBlockSize is the size of the call-2 block. [reported: Finch — both its
// libsystem_sandbox and its dyld shim use 0xa0; consistent with the iOS18
// decompile]
const CheckBlockSize = 0xa0

// checkBlock is the call-2 argument. [reported: Finch]
type checkBlock struct {
	_      structs.HostLayout
	result *uint64 // 0x00 out: non-zero = denied / sandboxed
	pid    int64   // 0x08
	op     *byte   // 0x10 operation name, NULL for "is sandboxed"
	kind   uint64  // 0x18 kernel filter kind (not the public enum)
	arg    *byte   // 0x20 filter argument (string filters only here)
	flags  uint64  // 0x28 kernel check flags
	ident  uint64  // 0x30 pidversion / unique id / reference, unused (0)
	_      [13]uint64
}

// CheckCall is a prepared Sandbox call 2 (check): the block, its result slot
// and the strings it points to.
type CheckCall struct {
	block  checkBlock
	result uint64
	op     []byte
	arg    []byte
}

// Arg is the third argument of __mac_syscall("Sandbox", CallCheck, arg).
func (c *CheckCall) Arg() unsafe.Pointer { return unsafe.Pointer(&c.block) }

// Result is the slot the kernel writes: non-zero means denied (or, for a
// self check, sandboxed), valid only after the call returned 0.
func (c *CheckCall) Result() *uint64 { return &c.result }

// NewSelfCheck prepares "is pid sandboxed": result pointer and pid set,
// everything else zero. [inferred from checkBlock's layout; the libsystem form
// sandbox_check(pid, NULL, SANDBOX_FILTER_NONE) is confirmed: Chromium IsSandboxed]
func NewSelfCheck(pid int) *CheckCall {
	c := &CheckCall{}
	c.block.result = &c.result
	c.block.pid = int64(pid)
	return c
}

// NewMarkerCheck prepares the run-marker query: may pid look up the global
// Mach service globalName? Operation "mach-lookup", kernel filter kind 6
// (global-name), no-report, so the probe stays out of the violation log.
// [inferred: the Rust procage 0.3.1's run marker; kinds and flags as in
// NewCheck]
func NewMarkerCheck(pid int, globalName string) (*CheckCall, error) {
	return NewCheck(pid, "mach-lookup", FilterGlobalName, globalName, CheckNoReport)
}

// NewCheck prepares a filtered call 2. ft must take a string argument (see
// [FilterType]); flags are the public SANDBOX_CHECK_* values and are
// translated to the kernel's bits.
func NewCheck(pid int, op string, ft FilterType, arg string, flags CheckFlags) (*CheckCall, error) {
	c := NewSelfCheck(pid)
	if op != "" {
		b, err := cString("operation", op)
		if err != nil {
			return nil, err
		}
		c.op = b
		c.block.op = &c.op[0]
	}
	if ft == FilterNone {
		if arg != "" {
			return nil, fmt.Errorf("libsandbox: check: filter argument %q given without a filter type: %w", arg, ErrInvalidArgument)
		}
	} else {
		kind, ok := kernelFilterKind[ft]
		if !ok {
			return nil, fmt.Errorf("libsandbox: check: filter type %d has no string-argument kernel form: %w", ft, ErrInvalidArgument)
		}
		b, err := cString("filter argument", arg)
		if err != nil {
			return nil, err
		}
		c.arg = b
		c.block.kind = kind
		c.block.arg = &c.arg[0]
	}
	kf, err := kernelCheckFlags(flags)
	if err != nil {
		return nil, err
	}
	c.block.flags = kf
	return c, nil
}

// kernelFilterKind maps the public enum to call 2's filter kind, for the
// filters whose argument is one string. [reported: Finch; the same mapping in
// the iOS18 decompile of sandbox_check_common]
var kernelFilterKind = map[FilterType]uint64{
	FilterPath:                  1,
	FilterGlobalName:            6,
	FilterLocalName:             7,
	FilterAppleEventDestination: 25,
	FilterRightName:             27,
	FilterPreferenceDomain:      28,
	FilterKextBundleID:          33,
	FilterInfoType:              34,
	FilterXPCServiceName:        50,
}

// Call 2's own flag bits. [reported: Finch]
var kernelFlag = []struct {
	public CheckFlags
	kernel uint64
}{
	{CheckNoReport, 0x1},
	{CheckCanonical, 0x2},
	{CheckNoFollow, 0x8},
	{CheckAllowApproval, 0x10},
	{CheckPosixReadable, 0x20},
	{CheckPosixWriteable, 0x40},
}

func kernelCheckFlags(f CheckFlags) (uint64, error) {
	var k uint64
	for _, m := range kernelFlag {
		if f&m.public != 0 {
			k |= m.kernel
			f &^= m.public
		}
	}
	if f != 0 {
		return 0, fmt.Errorf("libsandbox: check: unknown flags %#x: %w", uint32(f), ErrInvalidArgument)
	}
	return k, nil
}

// ConsumeBlockSize is the size of the call-6 block: three 8-byte fields
// [reported: Finch; the iOS18 decompile calls strlen before __sandbox_ms],
// zero-padded to eight words like the apply block [inferred].
const ConsumeBlockSize = 8 * 8

// consumeBlock is the call-6 argument. [reported: Finch]
type consumeBlock struct {
	_      structs.HostLayout
	token  *byte  // 0x00 token string
	length uint64 // 0x08 strlen(token) + 1
	handle *int64 // 0x10 out: extension handle
	_      [5]uint64
}

// ConsumeCall is a prepared Sandbox call 6 (consume an extension token): the
// block, the NUL-terminated token and the handle slot.
type ConsumeCall struct {
	block  consumeBlock
	handle int64
	token  []byte
}

// NewConsume prepares call 6 for token, as issued by [Lib.IssueExtension].
func NewConsume(token string) (*ConsumeCall, error) {
	if token == "" {
		return nil, fmt.Errorf("libsandbox: consume: empty extension token: %w", ErrInvalidArgument)
	}
	b, err := cString("extension token", token)
	if err != nil {
		return nil, err
	}
	c := &ConsumeCall{token: b}
	c.block.token = &c.token[0]
	c.block.length = uint64(len(c.token))
	c.block.handle = &c.handle
	return c, nil
}

// Arg is the third argument of __mac_syscall("Sandbox", CallConsume, arg).
func (c *ConsumeCall) Arg() unsafe.Pointer { return unsafe.Pointer(&c.block) }

// Handle is the slot the kernel writes the extension handle to.
func (c *ConsumeCall) Handle() *int64 { return &c.handle }

// cString returns s as a new NUL-terminated byte slice.
func cString(what, s string) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, fmt.Errorf("libsandbox: %s %q contains a NUL byte: %w", what, s, ErrInvalidArgument)
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b, nil
}
