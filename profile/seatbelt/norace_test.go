//go:build !race

package seatbelt

const raceEnabled = false
