//go:build !race

package sim_test

const intentRace = false
