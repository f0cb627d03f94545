package libsandbox

import (
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// words reads a block as the kernel would: native-endian 8-byte words.
func words(tb testing.TB, p unsafe.Pointer, size int) []uint64 {
	tb.Helper()
	if size%8 != 0 {
		tb.Fatalf("block size %d is not a multiple of 8", size)
	}
	raw := unsafe.Slice((*byte)(p), size)
	w := make([]uint64, size/8)
	for i := range w {
		w[i] = binary.NativeEndian.Uint64(raw[i*8:])
	}
	return w
}

func addr[T any](p *T) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }

func TestPolicyName(t *testing.T) {
	if got := string(PolicyName[:]); got != "Sandbox\x00" {
		t.Errorf("PolicyName = %q, want %q", got, "Sandbox\x00")
	}
}

func TestApplyBlockLayout(t *testing.T) {
	if got := unsafe.Sizeof(applyBlock{}); got != ApplyBlockSize || got < 64 {
		t.Fatalf("sizeof(applyBlock) = %d, want %d (at least 8 words)", got, ApplyBlockSize)
	}
	code := []byte("bytecode\x00\x01\x02")
	c := NewApply(code)
	code[0] = 'X' // the call keeps its own copy
	want := make([]uint64, ApplyBlockSize/8)
	want[0] = addr(&c.bytecode[0])
	want[1] = uint64(len(code))
	if diff := cmp.Diff(want, words(t, c.Arg(), ApplyBlockSize)); diff != "" {
		t.Errorf("call-0 block (-want +got):\n%s", diff)
	}
	if got := string(unsafe.Slice(c.block.data, c.block.size)); got != "bytecode\x00\x01\x02" {
		t.Errorf("data points at %q, want the bytecode given to NewApply", got)
	}

	empty := NewApply(nil)
	if diff := cmp.Diff(make([]uint64, ApplyBlockSize/8), words(t, empty.Arg(), ApplyBlockSize)); diff != "" {
		t.Errorf("empty call-0 block not all zero (-want +got):\n%s", diff)
	}
}

func TestSelfCheckLayout(t *testing.T) {
	if got := unsafe.Sizeof(checkBlock{}); got != CheckBlockSize {
		t.Fatalf("sizeof(checkBlock) = %#x, want %#x", got, CheckBlockSize)
	}
	c := NewSelfCheck(4242)
	want := make([]uint64, CheckBlockSize/8)
	want[0] = addr(c.Result())
	want[1] = 4242
	if diff := cmp.Diff(want, words(t, c.Arg(), CheckBlockSize)); diff != "" {
		t.Errorf("self-check block (-want +got):\n%s", diff)
	}
	// The result slot is outside the block, so the kernel's write cannot
	// clobber a field.
	start, end := addr(&c.block), addr(&c.block)+CheckBlockSize
	if r := addr(c.Result()); r >= start && r < end {
		t.Errorf("result slot %#x lies inside the block [%#x,%#x)", r, start, end)
	}
}

func TestMarkerCheckLayout(t *testing.T) {
	c, err := NewMarkerCheck(77, "org.procage.run.77.abc")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint64, CheckBlockSize/8)
	want[0] = addr(c.Result())
	want[1] = 77
	want[2] = addr(&c.op[0])
	want[3] = 6 // kernel kind of global-name
	want[4] = addr(&c.arg[0])
	want[5] = 0x1 // kernel no-report
	if diff := cmp.Diff(want, words(t, c.Arg(), CheckBlockSize)); diff != "" {
		t.Errorf("marker-check block (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("mach-lookup\x00", string(c.op)); diff != "" {
		t.Errorf("operation bytes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("org.procage.run.77.abc\x00", string(c.arg)); diff != "" {
		t.Errorf("argument bytes (-want +got):\n%s", diff)
	}
}

func TestNewCheckKindsAndFlags(t *testing.T) {
	tests := []struct {
		name      string
		ft        FilterType
		flags     CheckFlags
		wantKind  uint64
		wantFlags uint64
		reason    string
	}{
		{"path", FilterPath, 0, 1, 0, "path filter is kernel kind 1"},
		{"local-name", FilterLocalName, CheckNoReport, 7, 0x1, "local-name is kind 7"},
		{"xpc", FilterXPCServiceName, CheckCanonical | CheckNoFollow, 50, 0x2 | 0x8, "xpc-service-name is kind 50"},
		{"all flags", FilterRightName, CheckNoReport | CheckCanonical | CheckNoFollow | CheckAllowApproval | CheckPosixReadable | CheckPosixWriteable, 27, 0x7b, "every public flag maps to its kernel bit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCheck(1, "op", tt.ft, "x", tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			w := words(t, c.Arg(), CheckBlockSize)
			if w[3] != tt.wantKind || w[5] != tt.wantFlags {
				t.Errorf("kind, flags = %d, %#x; want %d, %#x (%s)", w[3], w[5], tt.wantKind, tt.wantFlags, tt.reason)
			}
		})
	}
}

func TestNewCheckRejects(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		ft     FilterType
		arg    string
		flags  CheckFlags
		reason string
	}{
		{"two-argument filter", "notification-post", FilterNotification, "x", 0, "notification takes two arguments"},
		{"integer filter", "iokit-open", FilterIOKitConnection, "x", 0, "no string form"},
		{"argument without filter", "op", FilterNone, "x", 0, "the argument would be ignored"},
		{"unknown flag", "op", FilterPath, "/x", 0x1, "not a SANDBOX_CHECK_* bit"},
		{"NUL in argument", "op", FilterPath, "/x\x00y", 0, "C string"},
		{"NUL in operation", "op\x00", FilterPath, "/x", 0, "C string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCheck(1, tt.op, tt.ft, tt.arg, tt.flags)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("NewCheck error = %v, want ErrInvalidArgument (%s)", err, tt.reason)
			}
		})
	}
}

func TestConsumeBlockLayout(t *testing.T) {
	if got := unsafe.Sizeof(consumeBlock{}); got != ConsumeBlockSize {
		t.Fatalf("sizeof(consumeBlock) = %d, want %d", got, ConsumeBlockSize)
	}
	c, err := NewConsume("tok;abc")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint64, ConsumeBlockSize/8)
	want[0] = addr(&c.token[0])
	want[1] = uint64(len("tok;abc") + 1) // strlen + 1
	want[2] = addr(c.Handle())
	if diff := cmp.Diff(want, words(t, c.Arg(), ConsumeBlockSize)); diff != "" {
		t.Errorf("call-6 block (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("tok;abc\x00", string(c.token)); diff != "" {
		t.Errorf("token bytes (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "a\x00b"} {
		if _, err := NewConsume(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewConsume(%q) error = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func TestUnsupportedError(t *testing.T) {
	cause := errors.New("dlsym failed")
	var err error = &UnsupportedError{Symbol: "sandbox_check", Library: LibSystemPath, OSBuild: "macOS 23E224", Err: cause}
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Error("errors.Is(err, errors.ErrUnsupported) = false")
	}
	if !errors.Is(err, cause) {
		t.Error("Unwrap does not reach the cause")
	}
	var ce error = &CompileError{Message: "unbound variable"}
	if errors.Is(ce, errors.ErrUnsupported) {
		t.Error("a CompileError must not read as unsupported")
	}
}
