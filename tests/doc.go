// Package tests holds procage's end-to-end tests: they cage real children
// on macOS (Seatbelt) and Linux (Landlock and seccomp). The spawn tests
// both OSes share are in spawn_unix_test.go, with what differs per OS in
// spawn_helper_darwin_test.go and spawn_helper_linux_test.go; escape and
// OS-only tests are in _darwin and _linux files. Darwin tests compile and
// link here (GOOS=darwin go test -exec=true ./tests) and run on the macOS
// lane. A test fails when the sandbox does not work (requireCage), and
// skips only through internal/testenv, naming the reason: on macOS only
// when the test process is itself sandboxed (a failure under
// PROCAGE_STRICT_SKIP), on Linux when the host lacks what a test is about
// (root, a program, a kernel feature); .ci/run's skip guard fails on any
// skip internal/ci/skipguard/allow_linux.txt does not name.
package tests
