package cage

import (
	"os"

	"golang.org/x/sys/unix"
)

// hostCgroupStatus is cgroupStatus for this process.
func hostCgroupStatus() string {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "reading /proc/self/mountinfo: " + err.Error()
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "reading /proc/self/cgroup: " + err.Error()
	}
	return cgroupStatus(mi, self, os.ReadFile, func(dir string) bool { return unix.Access(dir, unix.W_OK) == nil })
}
