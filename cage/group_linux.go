package cage

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// endGroup ends a run whose processes all stay in the process group pgid
// (the child's own, made at StepSession, when the sandbox forbids leaving
// it): it kills the group in rounds (endRounds) until no live member is
// left. A group outlives its leader, so this works after the child was
// reaped. Killed members of the group whose parent is gone are zombies
// until init reaps them, which may take a while; a zombie holds no
// descriptor, so it counts as ended.
func endGroup(pgid int) error {
	return endRounds(killRounds, func() (roundResult, error) {
		switch err := syscall.Kill(-pgid, syscall.SIGKILL); err {
		case nil:
		case syscall.ESRCH:
			return roundResult{}, nil
		default:
			return roundResult{}, err
		}
		n, err := liveMembers(pgid)
		if err != nil {
			n = 1 // cannot tell: count the group as alive and look again
		}
		return roundResult{killed: n}, nil
	})
}

// liveMembers counts the processes of group pgid that are not zombies,
// from /proc/<pid>/stat (proc(5): field 3 state, field 5 pgrp; Z zombie,
// X dead).
func liveMembers(pgid int) (int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	want := []byte(strconv.Itoa(pgid))
	n := 0
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone
		}
		// The command name may hold spaces and parentheses: fields start
		// after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' || !bytes.Equal(f[2], want) {
			continue
		}
		n++
	}
	return n, nil
}
