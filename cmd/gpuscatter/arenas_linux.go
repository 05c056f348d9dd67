//go:build linux && cgo

package main

// Under an address-space limit (ulimit -v) every reservation counts as
// used, and glibc reserves 64 MiB of address space for each malloc arena,
// one per thread that calls malloc up to eight per CPU. A GPU run has a
// dozen such threads (the runtime's, the Vulkan driver's), so the arenas
// alone reserve most of a GiB that holds almost nothing, and a run the
// memory check (hostmem) let through could then fail for want of address
// space in a thread's stack or the Go heap. Before the runtime starts a
// thread, this caps the arenas at two when such a limit is set; without
// one nothing changes. Other C libraries (musl) have no arenas and no
// M_ARENA_MAX.

/*
#include <malloc.h>
#include <sys/resource.h>

static int gs_arenas_capped;

__attribute__((constructor)) static void gs_cap_arenas(void) {
#ifdef M_ARENA_MAX
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		gs_arenas_capped = mallopt(M_ARENA_MAX, 2) == 1;
	}
#endif
}

static int gs_arenas_were_capped(void) { return gs_arenas_capped; }
*/
import "C"

// arenasCapped reports whether the process started under an address-space
// limit and capped glibc's malloc arenas.
func arenasCapped() bool { return C.gs_arenas_were_capped() != 0 }
