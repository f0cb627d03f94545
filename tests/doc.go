// Package tests holds procage's end-to-end tests. They cage real children
// and so run only on macOS (spawn_darwin_test.go, escape_darwin_test.go);
// on other systems they compile (GOOS=darwin go test -exec=true ./tests)
// but nothing runs. On macOS a test fails when Seatbelt or libsandbox does
// not work, and skips only when the test process is itself sandboxed.
package tests
