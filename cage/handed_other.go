//go:build !linux

package cage

// reopen: no backend but Linux's reopens a descriptor (handed_linux.go).
type reopen struct{}
