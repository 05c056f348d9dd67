package hostmem

import (
	"errors"
	"fmt"
	"math"
	"runtime"
)

// ErrNoMemory is wrapped by every error Check returns.
var ErrNoMemory = errors.New("not enough memory")

// MinCheck is the smallest request Check looks at: smaller ones are left
// to the runtime, so that small tensors cost no reads of /proc.
const MinCheck = 16 << 20

// Limit is the tightest bound on what the process may still allocate.
type Limit struct {
	// Bytes is how much more the process may allocate; math.MaxUint64
	// when nothing is known to bound it.
	Bytes uint64
	// Name says which limit decides: "address-space limit, ulimit -v",
	// "cgroup memory limit", "available memory", ...
	Name string
	// addressSpace: the limit counts address space reserved, not only
	// memory used (ulimit -v), so Headroom adds the threads' reservations.
	addressSpace bool
}

// Error is a request that does not fit.
type Error struct {
	Need     uint64 // the bytes asked for
	Headroom uint64 // what the check keeps back beside them (see Headroom)
	Limit    Limit  // what there is
}

// Error says how much is needed, with the headroom, and how much there
// is: "needs 512.0 MiB of memory and 400.0 MiB more for the runtime and
// the driver; 859.3 MiB is available (address-space limit, ulimit -v)".
func (e *Error) Error() string {
	return fmt.Sprintf("needs %s of memory and %s more for the runtime and the driver; %s is available (%s)",
		Size(e.Need), Size(e.Headroom), Size(e.Limit.Bytes), e.Limit.Name)
}

// Unwrap returns ErrNoMemory.
func (e *Error) Unwrap() error { return ErrNoMemory }

// The headroom Check keeps back from a limit, beside the request, for what
// the process allocates after the check outside the request itself (see
// Headroom).
const (
	// HeadroomBase is kept back from every limit: the Go runtime (its
	// heap grows in 64 MiB arenas and keeps GC metadata beside it) and a
	// Vulkan driver opened after the check (lavapipe maps LLVM and the
	// code it compiles). 128 MiB once let a run through that then failed
	// in a C allocation of the Vulkan binding, 64 MiB above the check's
	// decision under ulimit -v.
	HeadroomBase = 192 << 20
	// HeadroomPerThread is kept back from an address-space limit per CPU:
	// a thread reserves its stack (8 MiB) and, once it calls malloc,
	// glibc's 64 MiB arena, and the runtime and the driver (lavapipe
	// runs a thread per core) start threads after the check. Only an
	// address-space limit counts reservations as used.
	HeadroomPerThread = 72 << 20
)

// Headroom returns what Check keeps back from limit l beside a request of
// need bytes: HeadroomBase, an eighth of need (a large allocation's pages
// stay mapped for a while after it is freed, and the heap grows past a
// live size before the collector runs), and, when l is an address-space
// limit (ulimit -v), HeadroomPerThread for each CPU. A run the check lets
// through then does not end in the Go runtime's "out of memory" for want
// of that margin; a limit so small that the runtime cannot even start is
// beyond any check the program can make.
func Headroom(need uint64, l Limit) uint64 {
	h := HeadroomBase + need/8
	if l.addressSpace {
		h += HeadroomPerThread * uint64(runtime.NumCPU())
	}
	return h
}

// Check returns an *Error wrapping ErrNoMemory when need more bytes would
// not fit under the process's limits (see the package documentation),
// and nil when they fit or need is under MinCheck.
func Check(need uint64) error {
	if need < MinCheck {
		return nil
	}
	return checkAgainst(need, Available())
}

func checkAgainst(need uint64, l Limit) error {
	if l.Bytes == math.MaxUint64 {
		return nil
	}
	if m := Headroom(need, l); need > math.MaxUint64-m || need+m > l.Bytes {
		return &Error{Need: need, Headroom: m, Limit: l}
	}
	return nil
}

// Available returns the tightest limit on what the process may still
// allocate.
func Available() Limit {
	best := Limit{Bytes: math.MaxUint64}
	for _, l := range limits() {
		if l.Bytes < best.Bytes {
			best = l
		}
	}
	return best
}

// Size formats n bytes for a message: "1.5 GiB", "512 B".
func Size(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}
