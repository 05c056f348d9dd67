// Package bench measures how fast the scatter operators run on each backend
// and checks that every backend gives the CPU reference's answer.
//
// A Workload is an operator call: one of the built-in cases (Names, Builtin,
// Select), sized by a scale factor and generated from a seed, or a Custom
// call on the caller's tensors. Run executes every workload on a list of
// Targets, the first of which (the CPU backend) is the reference, and
// returns a Report:
//
//   - Time. Each target runs Options.Warmups untimed executions, then
//     Options.Repeats timed ones; a time is the wall time of Execute alone
//     (for a GPU backend: upload, run and download of tensors already in
//     host memory; no file I/O, no device or pipeline start-up). The inputs
//     are built once per workload and the output allocated once and reused,
//     so no timed call pays for faulting in fresh pages. A backend that
//     implements DeviceTimer also reports its device time and phases.
//   - Bandwidth. A result's GB/s is its traffic (data read, output written,
//     updates read, indices read) over its median time, and is compared
//     with a parallel memory copy measured in the same run (a buffer of the
//     workload's data size, at least 256 MiB, copied by GOMAXPROCS
//     goroutines).
//   - Verification. Every timed output is compared with the reference's:
//     bit for bit, any NaN equal to any NaN, except float sum, sub, prod and
//     mean reductions on the other targets, which may differ in rounding
//     within Options.Tolerance relative to the sum of the magnitudes of
//     the terms (1e-5 by default). The output is overwritten with the
//     inverse of the reference before each call, so an element a backend
//     does not write cannot pass.
//   - Memory. A workload whose estimated footprint exceeds the memory
//     available (AvailableMemory, or Options.MemoryBudget) is skipped with
//     a note, never attempted.
//
// Report.WriteTable prints the aligned table, Report.WriteJSON writes the
// figures as JSON and the subpackage chart draws them; files are written
// atomically (WriteFileAtomic, a wrapper of package atomicfile). The command 'gpuscatter bench' drives it
// all.
//
// # Built-in workloads
//
// Full size (scale 1); every dimension marked n scales with the factor.
//
//	SU1          ScatterUpdate-3 spec example 1: data f32[n=1000,256,10,15], indices i64[125,20] in [0,256), updates [n,125,20,10,15], axis 1
//	SND5         ScatterNDUpdate-15 spec example 5: data f32[n=1000,256,10,15], indices [m=25,125,3], updates [m,125,15]
//	SE           ScatterElements-18 axis 0: data f32[n=4096,4096], indices and updates [m=1024,4096]
//	SE-sum-dup   ScatterElements-18 add: data f32[n=1M], indices and updates [16n]
//	SE-zipf      SE-sum-dup with targets drawn from a bounded Zipf law, s=1.1, over the n elements (the hottest takes about
//	             an eighth of the updates), its ranks placed on the elements by a permutation drawn from the seed
//	SND-sum-dup  ScatterND-18 add: data f32[n=1M,16], indices [n,1], updates [n,16]
//	SS           SliceScatter-15: data f32[n=8192,8192], start 0, stop INT64_MAX, step 2 on both axes, updates [n/2,4096]
//	SND-max-i32  ScatterND-18 max: data i32[n=4M], indices [2n,1], updates [2n]
//	SND-1000     ScatterND-18: n=1000 calls per execution, each data f32[4096,16], indices [16,1], updates [16,16]
//	SND5-f16, SND5-i64, SE-f16, SE-i64: SND5 and SE on float16 and int64
//	KV-decode    TensorScatter-24 circular: 1000 decode steps in place on a cache f16[n=8,32,4096,128], each writing
//	             updates [n,32,1,128] at write indices [n] in [0,4096) advanced by one per step (Workload.Decode)
//
// Indices are int64, uniform over their range (SE-zipf's aside), so duplicates occur where
// there are more indices than targets. Input element i of each stream is a
// hash of (seed, stream, i), so inputs are the same for a seed whatever
// the number of threads.
package bench
