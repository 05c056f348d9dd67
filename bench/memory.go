package bench

import (
	"math"

	"github.com/gpuscatter/gpuscatter/hostmem"
)

// AvailableMemory returns how many bytes the process can still allocate:
// the tightest of the limits package hostmem reads (MemAvailable, the
// cgroup's limit, ulimit -v and -d). ok is false where none can be read
// (outside Linux).
func AvailableMemory() (n int64, ok bool) {
	l := hostmem.Available()
	if l.Bytes == math.MaxUint64 {
		return 0, false
	}
	return int64(min(l.Bytes, math.MaxInt64)), true
}

// footprint estimates the memory a run of w needs beyond what the process
// holds already: the inputs (unless held), the reference output and the
// output the backends share, the CPU's scratch (offsets and grouping, at
// most 16 bytes an index), a copy of every input and the output for each
// other backend (device memory is host memory on a CPU device such as
// lavapipe, and staging buffers are on a GPU), and, where the comparison
// allows rounding, the float64 inputs and output of the bounds.
func (w *Workload) footprint(others int, tolerance bool) int64 {
	inputs := w.DataBytes + w.IndicesBytes + w.UpdatesBytes
	need := 2*w.DataBytes + 16*w.numIndices + int64(others)*(inputs+w.DataBytes)
	if !w.held {
		need += inputs
	}
	if tolerance && others > 0 {
		dn := w.DataBytes / int64(max(1, w.DType.Size()))
		un := w.UpdatesBytes / int64(max(1, w.DType.Size()))
		need += 8 * (2*dn + un)
	}
	return need
}
