// Package opstest is the test suite that every gpuscatter backend runs, in
// the manner of gonum's testblas:
//
//   - RunConformance checks a backend against the spec examples
//     (ops/examples), the validation table (ValidationCases), the
//     out-of-range index errors (IndexErrorCases), unchanged inputs, in-place
//     execution, guard regions around the output, and a seeded sample of
//     random requests checked against Naive.
//   - RunDifferential compares two backends on seeded random requests.
//   - Conformance and Differential are the same suites reporting to a T,
//     which *testing.T satisfies through WrapT and which a runner outside
//     go test (package internal/gpucheck, behind `gpuscatter check`) implements
//     to count cases per operator (CaseReporter) and keep the first
//     mismatching element (MismatchReporter).
//   - Naive is a deliberately simple element-by-element reference written
//     from the specs' NumPy snippets and the contract in specs/README.md. It
//     shares no index arithmetic with ops.Plan; it calls ops.Prepare only to
//     decide whether a request is valid, and Plan.IndexAt only to word an
//     out-of-range error.
//   - RandomRequest and RandomBadRequest generate valid and invalid requests
//     across every operator, version, dtype and index type.
//
// Results are compared bit for bit (tensor.Equal) for the spec examples. For
// random requests, DiffFor compares min and max results bit for bit, NaNs
// included (the contract gives the greatest NaN bit pattern an element
// meets, in any order of the fold), and the rest as Same does, which treats
// any two NaNs of a float or complex dtype as equal: a float sum, sub, prod
// or mean folded out of index order (the GPU's atomics) fixes where a NaN
// appears but not which; everything else, signed zeros included, must match
// bit for bit.
package opstest
