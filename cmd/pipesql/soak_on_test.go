//go:build soak

package main

// soak is true under -tags soak: tests that take a fast size by default run at full
// size (the 6M-event crash test, the DAU demo for longer).
const soak = true
