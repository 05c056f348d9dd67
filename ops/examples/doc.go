// Package examples holds every example with values from the operator specs
// (listed in specs/README.md), as data: the request and the output the spec
// prints (with the errata listed in specs/README.md corrected). The ONNX
// text of TensorScatter-24 prints no values; its examples are the node
// tests ONNX ships with it.
//
// The conformance suite (ops/opstest) runs them on every backend and the CLI
// prints them. Each Example names the spec, the example and the dtypes chosen
// where the spec does not give them.
package examples
