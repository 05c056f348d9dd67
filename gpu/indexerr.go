//go:build cgo

package gpu

import (
	"fmt"

	"github.com/gpuscatter/gpuscatter/ops"
)

// badIndex returns the error for the first out-of-range index. The resolve
// kernel lowered the error word to (position >> shift) for every bad index
// position, so every position below word<<shift is in range and the first
// bad one lies in [word<<shift, (word+1)<<shift). The error is the one
// p.IndexAt gives, the same text as the CPU reference.
func badIndex(p *ops.Plan, word, shift uint32) error {
	n := uint64(p.NumIndices())
	lo := uint64(word) << shift
	hi := min(lo+1<<shift, n)
	for pos := lo; pos < hi; pos++ {
		if _, err := p.IndexAt(int(pos)); err != nil {
			return err
		}
	}
	return &ops.Error{Op: p.Op.Name, Input: "indices", Err: ops.ErrDeviceLost,
		Msg: fmt.Sprintf("vulkan: the device reported a bad index in positions [%d, %d) of indices, but all are in range", lo, hi)}
}
