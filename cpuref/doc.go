// Package cpuref is the CPU reference backend of gpuscatter. It executes an
// ops.Plan on the host, and its results are the ones every other backend is
// judged by.
//
// # Semantics
//
// The output is a copy of data into which the updates are applied in
// row-major order of their positions (specs/README.md, "Order"). With
// reduction none the last update to an element wins; the reductions fold
// every update in, in that order, each step computed in the data type:
// integers wrap, float16 and bfloat16 round after every step, bool maps
// sum, sub, prod, min and max to OR, XOR, AND, AND and OR, and float min and
// max propagate NaN (the NaN operand comes out unchanged, the current
// value's if both are NaN) and order -0 below +0. ScatterElementsUpdate-12's
// mean and use_init_val follow the README: the mean of integers of 32 bits
// or less is computed from an exact 64-bit sum and rounds toward negative
// infinity, and with use_init_val false an element that receives updates
// starts from the reduction's neutral value. Zero-size updates give a copy
// of data, and so do zero-size indices, except ScatterND tuples of length
// 0 (indices of shape [..., 0]), each of which addresses all of data as the
// ScatterNDUpdate-15 snippet computes it.
//
// Every index is checked before anything is written: on an out-of-range
// index Execute returns the error Plan.IndexAt gives for the first bad
// position in row-major order, and out is untouched or a copy of data.
//
// # Execution
//
// Execute runs in three phases, each spread over Backend.Workers
// goroutines: a pass that checks every index and turns it into an element
// offset (nothing is written yet), a chunked copy of data into out (skipped
// in place, and when a SliceScatter-15 slice covers all of data), and the
// scatter. Two updates can only land on the same element when they differ
// in j alone (Plan's u = (o*J + j)*Inner + k), so the scatter is split over
// ranges of o and k, each task walking j in order. Where that leaves too
// few tasks and grouping pays (several workers, or an output larger than
// the caches), the updates are grouped stably by ranges of target elements
// and each group is applied in order by one goroutine. ScatterUpdate-3
// applies only the last update to each target slice when finding it is
// cheap, since the others would be overwritten. Moves without a reduction
// are assignments and copies of elements of the dtype's size, one path for
// every dtype; reductions are generic loops instantiated per element type.
// Scratch memory is pooled between calls.
//
// Cancelling the context stops Execute between chunks of work. Out then
// holds its previous contents or a copy of data; once an in-place scatter
// has started it runs to the end.
package cpuref
