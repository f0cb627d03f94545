//go:build !linux

package cage

// hostCgroupStatus: no cgroups off Linux.
func hostCgroupStatus() string { return "not Linux" }
