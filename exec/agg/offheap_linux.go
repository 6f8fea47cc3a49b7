package agg

import "syscall"

// adviseHugePages asks for transparent huge pages where the system leaves them to
// madvise (the common default). A slot table is read at random: with 4 KB pages nearly
// every probe of a table of a million users also misses the TLB; with 2 MB pages its
// page table entries stay cached. The table is written all over as it fills, so huge
// pages back no memory that small pages would not. Advice, so failure changes nothing.
func adviseHugePages(mem []byte) {
	if len(mem) >= 4<<20 {
		_ = syscall.Madvise(mem, syscall.MADV_HUGEPAGE)
	}
}
