//go:build !soak

package main

// soak is false in the fast set that go test ./... runs; see soak_on_test.go.
const soak = false
