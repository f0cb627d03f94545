// Package ci holds no code: its test checks the invariants of
// .github/workflows/ci.yml that actionlint does not know about. The
// programs the macOS lane runs are in its subdirectories.
package ci
