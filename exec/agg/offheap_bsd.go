//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package agg

// adviseHugePages is Linux's transparent huge page advice (offheap_linux.go); these
// systems choose superpages by themselves.
func adviseHugePages([]byte) {}
