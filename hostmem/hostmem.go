package hostmem

import (
	"errors"
	"fmt"
	"math"
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
}

// Error is a request that does not fit.
type Error struct {
	Need  uint64 // the bytes asked for
	Limit Limit  // what there is
}

// Error says how much is needed and how much there is: "needs 1.5 GiB of
// memory; 905.2 MiB is available (address-space limit, ulimit -v)".
func (e *Error) Error() string {
	return fmt.Sprintf("needs %s of memory; %s is available (%s)", Size(e.Need), Size(e.Limit.Bytes), e.Limit.Name)
}

// Unwrap returns ErrNoMemory.
func (e *Error) Unwrap() error { return ErrNoMemory }

// margin is what Check keeps back from a limit for the Go runtime: the
// heap grows in 64 MiB arenas, and a large allocation's pages stay mapped
// for a while after it is freed.
func margin(need uint64) uint64 { return 64<<20 + need/16 }

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
	if m := margin(need); need > math.MaxUint64-m || need+m > l.Bytes {
		return &Error{Need: need, Limit: l}
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
