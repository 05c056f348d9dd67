//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package tensor

// Tensor.Data is little-endian and typed views alias it, so the module only
// builds for little-endian targets.
var _ = requiresLittleEndianTarget
