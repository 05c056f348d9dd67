// Package examples holds every example with values from the operator specs
// (listed in specs/README.md), as data: the request and the output the spec
// prints (with the errata listed in specs/README.md corrected).
//
// The conformance suite (ops/opstest) runs them on every backend and the CLI
// prints them. Each Example names the spec, the example and the dtypes chosen
// where the spec does not give them.
package examples
