// Package hostmem tells how much memory the process may still allocate,
// so that a tensor too large for the machine is an error that says so
// rather than a crash of the Go runtime.
//
// Go has no way to recover from a failed allocation: past a limit, make
// ends the process with "fatal error: out of memory" and a dump of every
// goroutine. Check is therefore asked before each large allocation (a
// tensor's payload, a file's contents). It compares the request with the
// tightest of the limits that apply to the process: the address-space and
// data limits (ulimit -v, ulimit -d), the memory limit of its control
// group (cgroup v2 memory.max or v1 memory.limit_in_bytes, less what the
// group uses), and the memory the kernel reports available
// (MemAvailable plus free swap). Each is read when Check runs, since
// earlier allocations and other processes move them.
//
// The answer is an estimate: it cannot see memory another process takes
// a moment later, and it keeps a headroom beside each request for what
// the process needs outside it (Headroom: the Go runtime, a Vulkan driver
// opened later, and under an address-space limit the threads' stacks and
// malloc arenas), so that a run it lets through does not end in the
// runtime. It turns the common cases (a file larger than the limit, an
// output that does not fit beside the inputs) into one line of error. A
// limit so small that the runtime cannot start is beyond its reach: the
// process fails before any of its code runs.
//
// MapHuge maps memory outside the Go heap on transparent huge pages, for
// large scratch buffers that are reused across calls: the kernel's
// setting (always, madvise or never) decides whether it can, and with
// madvise the mapping asks for them (MADV_HUGEPAGE).
package hostmem
