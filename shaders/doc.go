// Package shaders holds the SPIR-V compute kernels of the Vulkan backend and
// the table that names them.
//
// Each kernel family is one GLSL source under src/ (resolve.comp,
// scatter.comp, gather.comp, reduce.comp and sort.comp, with common.glsl,
// index.glsl and reduce.glsl shared), compiled into many variants by macros, the way
// ncnn builds its fp32/fp16 kernels: the kind of operator (Block, Element,
// Slice, Cache), the element size or the index type, the element type and atomic
// path of reductions, the sort stage and the width of positions. The
// reduction, and the workgroup memory of the accumulating scatter, are
// specialization constants (Variant.SpecConstants): one SPIR-V file serves
// every reduction of a dtype, and the driver drops the code of the others
// when it creates the pipeline. The generator (go run ../internal/shadergen, run by
// `go generate`) compiles every variant with glslc into spv/*.spv and writes
// variants_gen.go. A variant is a small wrapper the generator writes: the
// #version line, the variant's #defines and an #include of its family's
// source, so the .comp files carry no #version of their own; one glslc
// process compiles a batch of wrappers, a batch per CPU, since each
// process first spends about a quarter of a second on glslang's built-in
// tables. The SPIR-V files are committed and embedded, so building
// the module needs no shader compiler; TestGeneratedUpToDate fails when the
// committed files differ from what the sources compile to.
//
// The interface between the kernels and the host code (kinds, reductions,
// stages, flags, parameter and tensor slots, kernel arguments, limits,
// specialization constant IDs and the push-constant block) is one table,
// internal/shadergen/abi.go, from which the generator writes both sides:
// src/abi_gen.glsl, which common.glsl includes, abi_gen.go here (Kind,
// Reduction and Stage constants, PrivateWords, FlagsConstant) and
// gpu/abi_gen.go. A flag or a slot is one line there and `go generate`.
//
// Lookup returns the variant for a Key; Variant.SPIRV returns its code.
//
// # Loop bounds
//
// No invocation's work grows with the input: every loop of every kernel
// runs at most a fixed number of times, whatever the tensors' sizes. Work
// that grows goes to more invocations; a chain that must stay in order (a
// column walked in index order, the in-order fold of one target's
// updates) is cut into segments of at most SEGMENT steps, one pass
// each, the partial result carried in memory from one pass to the next.
// (Lavapipe, besides, stops a loop silently once one invocation has run it
// 65535 times in all, over every position of its run: the passes that
// walk or fold segments run one position per invocation.) The loops:
//
//	common.glsl  loadChunks            NUM_TENSORS
//	             affine                the dimensions of a map: rank <= ops.MaxRank (64)
//	             laterWins             the later positions along J: < LATER_MAX
//	             umod64 (INT64 0)      32 (a 64-bit by 32-bit remainder, bit by bit)
//	every kernel the positions of a run  pc.run <= MAX_RUN; the host passes 1 or 16
//	index.glsl   indexAt (Block)       a tuple's components: <= ops.MaxRank
//	resolve.comp resolveTable          its positions: TABLE_RUN; the table's
//	                                   words: TABLE_WORDS/LOCAL_SIZE
//	             findSlot              probes: <= TABLE_WORDS/2 (fewer keys than
//	                                   slots), TABLE_RUN*TABLE_WORDS/2 in all (53248)
//	scatter.comp walkColumn            one segment of a column: <= SEGMENT
//	             cacheChecked          the batch entries: <= LATER_MAX
//	             sliceRun              the positions of the run
//	             scatterPrivate        its tiles: <= 1 + 16*4*PRIV_WORDS/tile (the host
//	                                   gives a workgroup at most max(tile, 16*outputs)
//	                                   updates); clear and flush: <= 4*PRIV_WORDS/LOCAL_SIZE;
//	                                   PRIV_WORDS <= MaxPrivateWords (16384): at run 1,
//	                                   <= 4097 and 256;
//	                                   the identity word: 4/ELEM_BYTES
//	             scatterHot            slots: HOT_SLOTS/LOCAL_SIZE (4); probes: 4;
//	                                   the run (<= MAX_RUN)
//	             cacheValid            none
//	gather.comp  the run; a word's elements: <= 4
//	reduce.comp  fold                  one segment of a slot's list: <= SEGMENT
//	             bucketFold            load and store: BUCKET_WORDS/LOCAL_SIZE; tags:
//	                                   1024/LOCAL_SIZE; a pass's chunks, and within
//	                                   each its rounds (<= LOCAL_SIZE) and a round's
//	                                   run (<= LOCAL_SIZE): every round costs 1 plus
//	                                   its longest run, and a chunk starts only while
//	                                   the steps so far plus 2*LOCAL_SIZE <= SEGMENT
//	reduce.glsl  divRound              3 (a 96-bit long division)
//	             divStep (INT64 0)     32 (one 32-bit word of a long division, bit by bit);
//	                                   udiv64 takes 2, divRound 3
//	sort.comp    the run; the scan's segments: SEG (8) and NSEG (LOCAL_SIZE/8);
//	             radix scatter: its run <= SORT_RUN, a value's words <= 2,
//	             the nibbles' starts: 16
//
// The compare-and-swap loops of reduce.glsl and scatter.comp (applyGlobal,
// applyPrivate, addWord) are the exception: an attempt fails only when
// another invocation changed the word in between, so every failure is
// another's success and the retries of a pass are bounded by its updates,
// but not one invocation's by a constant. Lock-free loops of this kind are
// how every GPU library folds where no atomic instruction computes the
// step.
package shaders
