//go:build !linux

package cage_test

import "testing"

// skipIfTooOld is Linux's skip for a kernel whose Landlock ABI is too old;
// elsewhere a Linux plan is only planned, never refused for the kernel.
func skipIfTooOld(testing.TB, error) {}

// requireUserNamespace: a T1 plan is only planned here, never probed.
func requireUserNamespace(testing.TB) {}
