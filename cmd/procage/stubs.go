package main

import "io"

func cmdExplain(args []string, stdout, stderr io.Writer) (int, error) {
	return 2, usagef("explain: not wired yet")
}

func cmdRun(args []string, stdout, stderr io.Writer) (int, error) {
	return 2, usagef("run: not wired yet")
}

func cmdProbe(args []string, stdout, stderr io.Writer) error {
	return usagef("probe: not wired yet")
}
