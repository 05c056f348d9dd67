// Package shaders holds the SPIR-V compute kernels of the Vulkan backend and
// the table that names them.
//
// Each kernel family is one GLSL source under src/ (resolve.comp,
// scatter.comp, gather.comp, reduce.comp and sort.comp, with common.glsl
// and reduce.glsl shared), compiled into many variants by macros, the way
// ncnn builds its fp32/fp16 kernels: the kind of operator (Block, Element,
// Slice), the element size or the index type, the element type and atomic
// path of reductions, the sort stage and the width of positions. The
// reduction, and the workgroup memory of the accumulating scatter, are
// specialization constants (Variant.SpecConstants): one SPIR-V file serves
// every reduction of a dtype, and the driver drops the code of the others
// when it creates the pipeline. The generator (go run ./gen, run by
// `go generate`) compiles every variant with glslc into spv/*.spv and writes
// variants_gen.go. The SPIR-V files are committed and embedded, so building
// the module needs no shader compiler; TestGeneratedUpToDate fails when the
// committed files differ from what the sources compile to.
//
// Lookup returns the variant for a Key; Variant.SPIRV returns its code.
package shaders
