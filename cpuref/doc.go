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
// ranges of o and k, each task walking j in order. ScatterUpdate-3
// applies only the last update to each target slice when finding it is
// cheap, since the others would be overwritten. Moves without a reduction
// are assignments and copies of elements of the dtype's size, one path for
// every dtype; reductions are generic loops instantiated per element type.
// Scratch memory is pooled between calls (not in a sync.Pool, which the
// collector empties).
//
// Three more splits serve ScatterND and ScatterElements when the split by
// o and k does not fit: scatters onto single elements with at least one
// update for every four elements of an output larger than the caches
// (binned, binned.go), reductions with about as many updates as elements
// of out, or onto ScatterND slices (owned, owned.go), and scatters that
// leave too few tasks for many workers or on an output larger than the
// caches (grouped, group.go).
//
//   - Binned: the updates are split into chunks of consecutive positions.
//     Each chunk's task checks and decodes its indices (in one pass over
//     them where the target is the index times a stride) and appends each
//     target and update, in position order, to the list of its bin (a
//     range of target elements sized for the second-level cache); a list
//     is a chain of blocks of the chunk's own region of scratch (with
//     many bins, the entries gather a few dozen at a time in a buffer per
//     bin and go to the list together, streamed past the caches). For
//     4-byte elements on amd64 assembly loops do this partition
//     (binsimd.go): with AVX-512, 16 indices at a time are checked and
//     decoded, and into up to 16 bins each bin's lanes are compressed, in
//     lane order, onto the end of the bin's stage row; a stage row is the
//     bin's buffer, 64 entries flushed in one piece. Each bin is then one
//     task: it copies its range of data into out and folds the bin's list
//     of every chunk, chunk after chunk, block after block.
//   - Owned: on two to four workers, each worker owns a contiguous range of
//     target elements (or of rows, for ScatterND slices) and walks every
//     decoded update in position order, folding those that land in its
//     range into a copy of that range of data; out is written from the
//     copies once every worker is done.
//   - Grouped: the index pass works in chunks of consecutive positions;
//     each chunk, once checked and decoded, sorts its targets and updates
//     by group (a range of target elements sized for the caches) with a
//     stable counting sort, into its own region of scratch. Each group is
//     then one task: it copies its range of data into out and folds the
//     group's segment of every chunk, chunk after chunk.
//
// Why none changes a bit of the result: the contract is that each
// element folds its updates in position order, and a fold step reads and
// writes nothing but its own element (and, for mean, that element's count
// and sum). So the result depends only on the sequence of updates each
// element sees, and any split of the work gives the same bits if (1) each
// element's updates are all applied by one goroutine, and (2) that
// goroutine applies them in increasing position. Binned: every element
// lies in exactly one bin, and one task folds a bin (1); a chunk's task
// appends to each list in position order (a bin's buffer fills in order
// and empties onto the end of its list; a vector group's lanes are in
// position order, compression keeps their order, and groups are taken in
// order, the units a group leaves behind after the groups before it), the
// blocks of a list are
// chained in the order they were filled, the chunks are ranges of
// increasing positions, and the bin's task takes the chunks in order and
// each list from its first block to its last (2). Owned: every element
// lies in exactly one owner's range (1), and the owner walks positions in
// increasing order, keeping the matching ones in order when it compacts
// them (2). Grouped: every element lies in exactly one group, and one task
// folds a group (1); the chunks are ranges of increasing positions, the
// counting sort keeps a chunk's order within each group, and the task
// takes the chunks in order, so within a group positions only increase
// (2). The split by o and k and the pieces of ScatterND runs satisfy (1)
// and (2) the same way: tasks own disjoint ranges of o and k and walk j in
// order. None of this depends on the number of workers, chunks, bins,
// blocks or groups; TestSplitsKeepIndexOrder runs many of each against
// the naive reference on values whose rounding depends on the order.
//
// Cancelling the context stops Execute between chunks of work. Out then
// holds its previous contents or a copy of data; once an in-place scatter
// has started it runs to the end.
package cpuref
