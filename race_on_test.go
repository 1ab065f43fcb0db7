//go:build race

package main

// raceEnabled: the test binary is built with the race detector.
const raceEnabled = true
