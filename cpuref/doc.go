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
// max order -0 below +0 and propagate NaN: an element that meets a NaN (its
// own or an update's) ends as the NaN whose bits, read as an unsigned
// integer, are the greatest of those it met, unchanged, whatever the order
// of the updates. ScatterElementsUpdate-12's
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
// Execute checks every index before it writes anything, then copies data
// into out and scatters, each phase spread over Backend.Workers
// goroutines. Every split of the work keeps each element's updates in
// position order and in one goroutine, so the result is the same bits on
// any number of workers. How the work is split (by o and k, binned, owned,
// grouped) and the argument that no split changes a bit are in DESIGN.md
// beside this package:
// https://github.com/gpuscatter/gpuscatter/blob/main/cpuref/DESIGN.md
//
// Cancelling the context stops Execute between chunks of work. Out then
// holds its previous contents or a copy of data; once an in-place scatter
// has started it runs to the end.
package cpuref
