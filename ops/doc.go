// Package ops describes the scatter operators gpuscatter runs, once, for every
// backend: which operator versions exist (All, Lookup), their validation and
// shape rules (Prepare), the normalised Plan a backend executes, the rule for
// index values (Plan.IndexAt), and the Backend interface.
//
// The contract where the specs are silent (update order, duplicates, bool
// and integer semantics, NaN and signed zeros, mean rounding) is stated in
// the README and implemented by the CPU reference, package cpuref; every
// other backend must give cpuref's results.
//
// Errors are *Error values that name the operator and the input at fault and
// wrap one of the Sentinel constants (ErrShape, ErrIndexRange, ...), so
// callers test them with errors.Is. Nothing in this package panics on bad
// input, and it holds no cgo.
package ops
