package main

import "io"

func cmdExplain(args []string, stdout, stderr io.Writer) (int, error) {
	return 2, usagef("explain: not wired yet")
}
