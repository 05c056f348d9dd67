// common.glsl: what every gpuscatter kernel shares. Tensors are reached
// through buffer device addresses, so no kernel has descriptor bindings and
// no binding range limits a tensor's size.
//
// A tensor on the device is a list of chunks, each one VkBuffer of 2^shift
// bytes (the last one may be shorter). Its chunk table is an array of
// uint64 chunk base addresses, and byte offset o of the tensor lies at
// table[o >> shift] + (o & (2^shift - 1)). Chunks are at least 16 bytes and
// every element size divides them, so no element and no 32-bit word
// straddles two chunks.
//
// One small buffer per call, the parameter buffer, holds the parameter
// array (uint64 words, read through param()), the chunk tables and the
// error word. Its first 16 words are also pushed as 32-bit push constants
// (pc.hot) when positions are 32-bit: push constants are uniform for
// certain, while loading the same global address from every invocation
// costs a gather per SIMD batch on CPU devices.
//
// Variant macros (set by the generator, shaders/gen):
//   LOCAL_SIZE   workgroup size (x only)
//   POS_BITS     32 or 64: the width of element positions. 32 when every
//                count of the plan is at most 2^31, which keeps index
//                arithmetic in 32 bits; byte offsets are always 64-bit.

#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#ifndef LOCAL_SIZE
#define LOCAL_SIZE 256
#endif
#ifndef POS_BITS
#define POS_BITS 32
#endif

#if POS_BITS == 64
#define pos_t uint64_t
#else
#define pos_t uint
#endif

// Kinds, shared with gpu/plan.go. BLOCK: an index (ScatterUpdate) or an
// index tuple (ScatterNDUpdate, ScatterND) picks a block of Inner
// contiguous output units. ELEMENT: every index picks one element along
// the axis (ScatterElementsUpdate, Scatter, ScatterElements). SLICE:
// SliceScatter, no indices.
#define KIND_BLOCK 1
#define KIND_ELEMENT 2
#define KIND_SLICE 3

// Reductions, shared with gpu/plan.go and ops.Reduction (same numbers).
#define RED_NONE 0
#define RED_SUM 1
#define RED_SUB 2
#define RED_PROD 3
#define RED_MIN 4
#define RED_MAX 5
#define RED_MEAN 6

// The call's flags (FLAG_*) are specialization constant 2, not a push
// constant: the driver folds them and drops the code of the flags a call
// does not set. On CPU devices a branch is not skipped when no invocation
// takes it: both sides run under a mask, so code behind an unset flag
// would cost as much as the work itself.
layout(constant_id = 2) const uint FLAGS = 0u;

// Flags, shared with gpu/plan.go.
#define FLAG_NEGATIVE 1u // indices may count from the end: [-s, s-1]
#define FLAG_OWNER 2u    // updates may collide: the last one wins
#define FLAG_MAPS 4u     // ELEMENT: the outer and inner maps are lists
#define FLAG_ONE_CHUNK 8u // every tensor fits in one chunk
#define FLAG_COUNT 16u    // resolve counts the updates per slot (owner words)
#define FLAG_TARGET 32u   // ELEMENT resolve stores targets, not index values
#define FLAG_XTABLES 64u  // the reduction tensors (T_ACC ...) are present
#define FLAG_USE_INIT 128u // ScatterElementsUpdate-12 use_init_val
#define FLAG_PRIVATE 256u // scatter: accumulate in workgroup memory first
#define FLAG_WALK 512u    // ELEMENT scatter: one position per column (walkColumn)
#define FLAG_LATER 1024u  // updates may collide, but J <= LATER_MAX: the scatter looks at later indices (laterWins), no owner words

// The parameter array of BLOCK and ELEMENT plans (uint64 words), shared
// with gpu/plan.go. An update position u splits as u = (o*J + j)*Inner + k;
// it lands on o*OSTRIDE + v*VSTRIDE + k*ISTRIDE, v being its normalised
// index (the row of a tuple for BLOCK). ELEMENT plans whose outer or inner
// index space does not collapse to one dimension (FLAG_MAPS) map o and k
// through lists of (size, magic, stride) triples instead.
#define P_J 0           // the j extent
#define P_MAGIC_J 1     // fast-division constant for J (see udiv)
#define P_INNER 2       // the k extent
#define P_MAGIC_INNER 3
#define P_VSTRIDE 4
#define P_OSTRIDE 5
#define P_ISTRIDE 6
#define P_ROWS 7        // BLOCK: rows the tuples address; ELEMENT: the axis size
#define P_MAGIC_ROWS 8
#define P_OUTPUTS 9     // output units
#define P_TUPLE 10      // BLOCK: components per index tuple (k of ND)
#define P_TUPLE_AT 11   // BLOCK: where the k dimension sizes start
#define P_NOUTER 12     // FLAG_MAPS: dimensions of the outer map
#define P_NINNER 13     // FLAG_MAPS: dimensions of the inner map
#define P_MAPS_AT 14    // FLAG_MAPS: the outer map's triples, then the inner map's
#define P_XT 15         // FLAG_XTABLES: where the byte offsets of the chunk
                        // tables of T_ACC ... T_SCAN are listed

// The parameter array of SLICE plans: update position u lands on
// BASE + sum of its coordinates times the strides, over NDIMS dimensions
// listed innermost first as (size, magic, stride) triples from S_DIMS_AT.
#define S_NDIMS 0
#define S_BASE 1
#define S_DIMS_AT 2

layout(local_size_x = LOCAL_SIZE, local_size_y = 1, local_size_z = 1) in;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer U64s {
	uint64_t v[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word {
	uint w;
};
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Word2 {
	uvec2 v;
};
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Word4 {
	uvec4 v;
};

// The push constants of every kernel (128 bytes, the least every
// device offers; gpu/execute.go packs them).
layout(push_constant, std430) uniform Push {
	uint64_t params; // address of the parameter buffer
	uint64_t base;   // first position of this dispatch
	uint64_t end;    // one past the last position of this dispatch
	// Byte offsets, within the parameter buffer, of the chunk tables and
	// of the error word.
	uint outT;
	uint updT;
	uint idxT;
	uint normT;  // normalised indices (uint32 each)
	uint ownerT; // owner words (uint32 each)
	uint errAt;
	uint shift;    // log2 of the chunk size in bytes
	uint errShift; // the error word holds (first bad position) >> errShift
	uint run;    // consecutive positions per invocation, at most MAX_RUN
	uint hot[16]; // the parameter array's first 16 words (POS_BITS 32)
	uint seg;     // scatter.comp FLAG_WALK: the segment of J this dispatch walks
} pc;

// Loop bounds. No invocation's work grows with the input: every loop of
// every kernel runs at most a fixed number of times (shaders/doc.go lists
// them). Work that grows goes to more invocations, and chains that must
// stay in order (a column walked in index order, the in-order fold of a
// target's updates) to further passes of at most SEGMENT steps each, which
// carry the partial result in memory from one pass to the next.
#define MAX_RUN 64u     // pc.run: the host passes 1 (GPUs) or 16 (CPU devices)
#define RUN min(pc.run, MAX_RUN)
#define SEGMENT 16384u  // steps of one walk or fold segment (gpu/record.go: segment)
#define LATER_MAX 64u   // J of FLAG_LATER plans (gpu/plan.go: laterMax)

// param returns word i of the parameter array.
uint64_t param(uint i) {
#if POS_BITS == 32
	if (i < 16u) {
		return uint64_t(pc.hot[i]);
	}
#endif
	return U64s(pc.params).v[i];
}

// The tensors a kernel addresses, by their chunk tables. The first five
// have their table offsets in the push constants; the reduction tensors
// (FLAG_XTABLES) list theirs in the parameter array, from word
// params[P_XT] on.
#define T_OUT 0
#define T_UPD 1
#define T_IDX 2
#define T_NORM 3   // normalised indices, or targets (uint32 each)
#define T_OWNER 4  // owner words, or update counts per slot (uint32 each)
#define T_ACC 5    // mean: 64-bit sums of integers of 32 bits or less
#define T_K1 6     // sort: keys and values, two ping-pong pairs
#define T_V1 7
#define T_K2 8
#define T_V2 9
#define T_HIST 10  // sort: digit counts per tile
#define T_SCAN 11  // scan: block sums of every level
#define T_LIST 12  // fold: the count, then the slots, of slots with more than SEGMENT updates
#define NUM_TENSORS 13
#define T_NONE 0xFFFFFFFFu

uint tableAt(uint t) {
	switch (t) {
	case T_OUT:
		return pc.outT;
	case T_UPD:
		return pc.updT;
	case T_IDX:
		return pc.idxT;
	case T_NORM:
		return pc.normT;
	case T_OWNER:
		return pc.ownerT;
	}
	U64s p = U64s(pc.params);
	return uint(p.v[uint(p.v[P_XT]) + t - 5u]);
}

// firstChunk holds each tensor's first chunk address when every tensor has
// one chunk (FLAG_ONE_CHUNK, the common case): loadChunks reads them once
// per invocation, and addressOf needs no table lookup per element.
uint64_t firstChunk[NUM_TENSORS];

void loadChunks() {
	if ((FLAGS & FLAG_ONE_CHUNK) != 0u) {
		uint n = (FLAGS & FLAG_XTABLES) != 0u ? uint(NUM_TENSORS) : 5u;
		for (uint t = 0u; t < n; t++) {
			firstChunk[t] = U64s(pc.params + uint64_t(tableAt(t))).v[0];
		}
	}
}

// addressOf returns the device address of byte offset o of tensor t.
uint64_t addressOf(uint t, uint64_t o) {
	if ((FLAGS & FLAG_ONE_CHUNK) != 0u) {
		return firstChunk[t] + o;
	}
	uint64_t mask = (uint64_t(1) << pc.shift) - uint64_t(1);
	return U64s(pc.params + uint64_t(tableAt(t))).v[uint(o >> pc.shift)] + (o & mask);
}

uint loadWord(uint t, uint64_t o) {
	return Word(addressOf(t, o)).w;
}

void storeWord(uint t, uint64_t o, uint v) {
	Word(addressOf(t, o)).w = v;
}

uint64_t errorAddress() {
	return pc.params + uint64_t(pc.errAt);
}

// errorSet reports whether an earlier pass found a bad index.
bool errorSet() {
	return Word(errorAddress()).w != 0xFFFFFFFFu;
}

// invocation returns this invocation's linear index in its dispatch's 1-D,
// 2-D or 3-D grid (the host splits big dispatches into grids and into
// several dispatches of at most 2^31 positions).
uint invocation() {
	uint group = (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	return group * uint(LOCAL_SIZE) + gl_LocalInvocationID.x;
}

// firstPosition returns the first of the pc.run consecutive positions this
// invocation handles. On CPU devices (where one thread runs a workgroup in
// SIMD batches) runs of several positions amortise the per-invocation
// work; GPUs use runs of 1, so that neighbouring invocations touch
// neighbouring memory.
pos_t firstPosition() {
	return pos_t(pc.base) + pos_t(invocation()) * pos_t(RUN);
}

// runEnd returns one past the last position of the run starting at p.
uint64_t runEnd(pos_t p) {
	return min(pc.end, uint64_t(p) + uint64_t(RUN));
}

// udiv returns n / d. With 32-bit positions it avoids the hardware divide
// (slow, and scalarised on CPU devices): m = ceil(2^32 / d) makes
// mulhi(n, m) either n / d or one more, and one remainder test fixes it.
// m is 0 when d is 1 or above 2^31, where the quotient is trivial.
pos_t udiv(pos_t n, uint64_t d, uint64_t m) {
#if POS_BITS == 64
	return n / d;
#else
	uint dd = uint(d);
	if (m == 0ul) {
		return dd == 1u ? n : (n >= dd ? 1u : 0u);
	}
	uint q, lo;
	umulExtended(n, uint(m), q, lo);
	return n - q * dd >= dd ? q - 1u : q;
#endif
}

// affine maps a position x of a row-major index space onto the output: the
// space has n dimensions, listed innermost first as (size, magic, stride)
// triples at params[at...]; the result is the sum of coordinate * stride.
// Strides may be negative (SliceScatter steps); the sum wraps, which is
// exact because the true result is an in-range position.
pos_t affine(pos_t x, uint n, uint at) {
	pos_t acc = pos_t(0);
	for (uint i = 0u; i + 1u < n; i++) {
		uint t = at + 3u * i;
		pos_t size = pos_t(param(t));
		pos_t q = udiv(x, param(t), param(t + 1u));
		acc += (x - q * size) * pos_t(param(t + 2u));
		x = q;
	}
	if (n > 0u) {
		acc += x * pos_t(param(at + 3u * (n - 1u) + 2u));
	}
	return acc;
}

// split decomposes an update position u = (o*J + j)*Inner + k.
void split(pos_t u, out pos_t o, out pos_t j, out pos_t k) {
	pos_t inner = pos_t(param(P_INNER));
	pos_t r = udiv(u, param(P_INNER), param(P_MAGIC_INNER));
	k = u - r * inner;
	o = udiv(r, param(P_J), param(P_MAGIC_J));
	j = r - o * pos_t(param(P_J));
}

// target returns the output unit that update (o, j, k) lands on, given the
// normalised index value v.
pos_t target(pos_t o, pos_t k, uint v) {
	pos_t t = pos_t(v) * pos_t(param(P_VSTRIDE));
	if ((FLAGS & FLAG_MAPS) != 0u) {
		uint n = uint(param(P_NOUTER)), at = uint(param(P_MAPS_AT));
		return t + affine(o, n, at) + affine(k, uint(param(P_NINNER)), at + 3u * n);
	}
	return t + o * pos_t(param(P_OSTRIDE)) + k * pos_t(param(P_ISTRIDE));
}

uint64_t u32Offset(pos_t i) {
	return uint64_t(i) * 4ul;
}

// laterWins reports whether an update of position j+1 ... J-1 along the
// index dimension has the normalised index v, as the one at j does: then
// that later one wins, and the one at j is skipped. Plans with few
// positions along it (FLAG_LATER: J <= LATER_MAX) look, instead of
// claiming a word per slot of the output. at is the T_NORM position of
// (o, j+1, k); positions of consecutive j are step apart.
bool laterWins(pos_t j, pos_t at, pos_t step, uint v) {
	uint jn = min(uint(param(P_J)), LATER_MAX);
	for (uint i = uint(j) + 1u; i < jn; i++) {
		if (Word(addressOf(T_NORM, u32Offset(at))).w == v) {
			return true;
		}
		at += step;
	}
	return false;
}

// owner returns the owner word of slot: j+1 of the last update claiming
// it, or 0.
uint owner(pos_t slot) {
	return Word(addressOf(T_OWNER, u32Offset(slot))).w;
}
