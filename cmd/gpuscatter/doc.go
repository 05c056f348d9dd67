// Gpuscatter runs the tensor scatter operators of the OpenVINO and ONNX
// scatter family on .npy and ONNX TensorProto (.pb) files, and single-node
// ONNX models, and checks results against the CPU reference.
//
// Usage:
//
//	gpuscatter run --op NAME [--axis INT|FILE.npy] [--reduction R] [--use-init-val=true|false]
//	               [--mode linear|circular]
//	               --data FILE.npy [--indices FILE.npy] --updates FILE.npy
//	               [--start L --stop L --step L [--axes L]]
//	               --out FILE.npy [--backend auto|cpu|gpu] [--device SEL]
//	gpuscatter run --model FILE.onnx [--data FILE] [--indices FILE] [--updates FILE]
//	               --out FILE [--backend auto|cpu|gpu] [--device SEL]
//	gpuscatter bench [--backend auto|cpu|gpu] [--device SEL] [--workloads NAME,...]
//	                 [--quick | --scale F] [--repeats N] [--seed N] [--json FILE] [--plot FILE.png]
//	gpuscatter check [--device SEL] [--quick | --full] [--seed N] [--match TEXT]
//	                 [--list] [--validate] [--json FILE]
//	gpuscatter onnx-test [--backend auto|cpu|gpu] [--device SEL] DIR...
//	gpuscatter examples [--backend auto|cpu|gpu] [--device SEL] [--match TEXT]
//	gpuscatter ops
//	gpuscatter devices [--json]
//	gpuscatter version
//	gpuscatter help [COMMAND]
//
// The run command reads its inputs, validates them against the operator's
// rules (package ops), executes the operator on the chosen backend and
// writes the result atomically (package atomicfile): a failed, interrupted
// or killed run leaves no output file behind and never replaces an existing
// one. With --backend auto (the default) it runs on the Vulkan device when
// that is a GPU, and on the CPU otherwise; a --device (or
// GPUSCATTER_DEVICE) that selects no device is an error under every
// backend that opens one, listing the devices, and so is a
// GPUSCATTER_DEVICE_TIMEOUT that is not a positive duration. Under auto
// one notice line on stderr says where the call ran and why, whichever
// path it took; a device lost during the call sends it to the CPU. The start, stop, step and axes of
// SliceScatter-15 are each a comma list of integers such as 0,-1 or a path
// ending in .npy or .pb; the axis is an integer or a path ending in .npy or
// .pb. Wherever a flag takes an .npy file it takes a TensorProto file whose
// name ends in .pb, and --out FILE.pb writes one (the only file form of
// bfloat16). With --model, run takes the operator, its version (from the
// opset import) and its axis, reduction and mode from a model whose graph
// is one Scatter, ScatterElements, ScatterND or TensorScatter node.
//
// The check command qualifies a Vulkan device: it runs the GPU backend's
// conformance suite (package internal/gpucheck, the one go test ./gpu runs)
// through every execution path on that device against the CPU reference,
// and prints one row per path and operator with the first mismatch of each
// failing row.
//
// The onnx-test command runs ONNX backend node tests (model.onnx and
// test_data_set_*/input_N.pb, output_N.pb) and compares each output with
// the expected one.
//
// The bench command times each workload on the Vulkan device and on the
// CPU reference and verifies the device's output against the CPU's; with
// run's operator and input flags it times that call instead.
//
// The devices command lists the Vulkan devices with their capabilities.
//
// The examples command runs every example printed in the operator specs
// through the same code path as run and reports whether each result matches
// the spec's output.
//
// Exit status: 0 on success; 1 for invalid input or a failed run, with one
// line on stderr that starts with "gpuscatter: " and names the input at
// fault; 2 for a malformed command line, with a one-line message followed by
// the usage. SIGINT, SIGTERM and SIGHUP stop a command cleanly, with one line
// such as "gpuscatter: interrupted by SIGTERM" and 128 plus the signal's
// number.
package main
