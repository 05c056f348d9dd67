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
// error word. Its first HOT_WORDS words are also pushed as 32-bit push
// constants (pc.hot) when positions are 32-bit: push constants are uniform for
// certain, while loading the same global address from every invocation
// costs a gather per SIMD batch on CPU devices.
//
// Variant macros (set by the generator, internal/shadergen):
//   POS_BITS     32 or 64: the width of element positions. 32 when every
//                count of the plan is at most 2^31, which keeps index
//                arithmetic in 32 bits; byte offsets are always 64-bit.
//   INT64        1 (the default): the kernel uses 64-bit integers
//                (shaderInt64). 0: the 32-bit baseline for devices
//                without them, POS_BITS 32 only. Addresses, byte offsets
//                and 64-bit parameter and index words are then uvec2
//                pairs (low, high) with the carries done by hand
//                (GL_EXT_buffer_reference_uvec2); counts and positions,
//                at most 2^31 in such plans, are 32-bit.
//
// The types and helpers below hide the difference, so that kernels are
// written once: addr_t (a device address), off_t (a byte offset in a
// tensor), word64_t (a 64-bit word of the parameter buffer or the push
// constants), param_t (a parameter word as the kernel computes with it),
// count_t (a position or count that may pass pos_t's positions: run ends,
// index element positions, bad positions) and idx_t (an index value, a
// two's complement 64-bit integer).
//
// Every number the kernels share with the host code (kinds, reductions,
// flags, parameter and tensor slots, limits, the workgroup size LOCAL_SIZE
// and the push-constant block) comes from abi_gen.glsl, which the
// generator writes from internal/shadergen/abi.go along with the host's
// copy.

#extension GL_EXT_buffer_reference2 : require

#ifndef POS_BITS
#define POS_BITS 32
#endif
#ifndef INT64
#define INT64 1
#endif

#if INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define word64_t uint64_t
#define addr_t uint64_t
#define off_t uint64_t
#define param_t uint64_t
#define count_t uint64_t
#define idx_t int64_t
#else
#extension GL_EXT_buffer_reference_uvec2 : require
#if POS_BITS != 32
#error common.glsl: INT64 0 needs POS_BITS 32
#endif
#define word64_t uvec2
#define addr_t uvec2
#define off_t uvec2
#define param_t uint
#define count_t uint
#define idx_t uvec2
#endif

#if POS_BITS == 64
#define pos_t uint64_t
#else
#define pos_t uint
#endif

#include "abi_gen.glsl"

// --- 64-bit words ---------------------------------------------------------
// With INT64 the helpers are the plain operations; without, they work on
// (low, high) pairs.

#if INT64
#define pcBase() pc.base
#define pcEnd() pc.end

// offsetOf returns the byte offset of element i of size bytes.
off_t offsetOf(count_t i, uint bytes) {
	return i * uint64_t(bytes);
}

off_t offAdd(off_t o, uint d) {
	return o + uint64_t(d);
}

// offLow returns the low 32 bits of o.
uint offLow(off_t o) {
	return uint(o);
}

// offAlign4 returns o rounded down to its 32-bit word.
off_t offAlign4(off_t o) {
	return o & ~uint64_t(3);
}

addr_t addrAdd(addr_t a, uint d) {
	return a + uint64_t(d);
}

// makeIdx returns the 64-bit integer of words lo and hi. It builds the
// value from words: llvmpipe (Mesa 22.3) miscompiles int64_t(int)
// (OpSConvert), which turned -1 into a huge positive index.
idx_t makeIdx(uint lo, uint hi) {
	return int64_t(packUint2x32(uvec2(lo, hi)));
}

bool sLess(idx_t a, idx_t b) {
	return a < b;
}

bool sNegative(idx_t a) {
	return a < 0l;
}

idx_t sAdd(idx_t a, idx_t b) {
	return a + b;
}

idx_t sNeg(idx_t a) {
	return -a;
}

// idxLow returns the low bits of a as a count.
count_t idxLow(idx_t a) {
	return uint64_t(a);
}
#else
#define pcBase() pc.base.x
#define pcEnd() pc.end.x

uvec2 add64(uvec2 a, uvec2 b) {
	uint c;
	uint lo = uaddCarry(a.x, b.x, c);
	return uvec2(lo, a.y + b.y + c);
}

off_t offsetOf(count_t i, uint bytes) {
	uvec2 r;
	umulExtended(i, bytes, r.y, r.x);
	return r;
}

off_t offAdd(off_t o, uint d) {
	return add64(o, uvec2(d, 0u));
}

uint offLow(off_t o) {
	return o.x;
}

off_t offAlign4(off_t o) {
	return uvec2(o.x & ~3u, o.y);
}

addr_t addrAdd(addr_t a, uint d) {
	return add64(a, uvec2(d, 0u));
}

idx_t makeIdx(uint lo, uint hi) {
	return uvec2(lo, hi);
}

bool sLess(idx_t a, idx_t b) {
	return a.y != b.y ? int(a.y) < int(b.y) : a.x < b.x;
}

bool sNegative(idx_t a) {
	return int(a.y) < 0;
}

idx_t sAdd(idx_t a, idx_t b) {
	return add64(a, b);
}

idx_t sNeg(idx_t a) {
	return add64(~a, uvec2(1u, 0u));
}

count_t idxLow(idx_t a) {
	return a.x;
}

// umod64 returns x mod m (m at most 2^31) by binary long division: 32
// steps, each keeping the remainder below m.
uint umod64(uvec2 x, uint m) {
	uint r = x.y % m;
	for (int b = 31; b >= 0; b--) {
		r = (r << 1) | ((x.x >> uint(b)) & 1u);
		if (r >= m) {
			r -= m;
		}
	}
	return r;
}
#endif

// The call's flags (FLAG_*) are specialization constant SPEC_FLAGS, not a
// push constant: the driver folds them and drops the code of the flags a
// call does not set. On CPU devices a branch is not skipped when no
// invocation takes it: both sides run under a mask, so code behind an
// unset flag would cost as much as the work itself.
layout(constant_id = SPEC_FLAGS) const uint FLAGS = 0u;

layout(local_size_x = LOCAL_SIZE, local_size_y = 1, local_size_z = 1) in;

#if INT64
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer U64s {
	uint64_t v[];
};
#endif
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Pairs {
	uvec2 v[];
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

// Loop bounds. No invocation's work grows with the input: every loop of
// every kernel runs at most a fixed number of times (shaders/doc.go lists
// them). Work that grows goes to more invocations, and chains that must
// stay in order (a column walked in index order, the in-order fold of a
// target's updates) to further passes of at most SEGMENT steps each, which
// carry the partial result in memory from one pass to the next (MAX_RUN,
// SEGMENT).
#define RUN min(pc.run, MAX_RUN)

// param returns word i of the parameter array (without INT64 its low
// word: the kernels compute in 32 bits there).
param_t param(uint i) {
#if POS_BITS == 32
	if (i < uint(HOT_WORDS)) {
		return param_t(pc.hot[i]);
	}
#endif
#if INT64
	return U64s(pc.params).v[i];
#else
	return Pairs(pc.params).v[i].x;
#endif
}

// param64 returns word i of the parameter array, all 64 bits. (The hot
// words of a plan with 32-bit positions are below 2^32: gpu/plan.go.)
word64_t param64(uint i) {
#if INT64
	return param(i);
#else
	if (i < uint(HOT_WORDS)) {
		return uvec2(pc.hot[i], 0u);
	}
	return Pairs(pc.params).v[i];
#endif
}

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
#if INT64
	U64s p = U64s(pc.params);
	return uint(p.v[uint(p.v[P_XT]) + t - uint(T_ACC)]);
#else
	Pairs p = Pairs(pc.params);
	return p.v[p.v[P_XT].x + t - uint(T_ACC)].x;
#endif
}

// chunkBase returns entry c of the chunk table at byte table of the
// parameter buffer.
addr_t chunkBase(uint table, uint c) {
#if INT64
	return U64s(pc.params + uint64_t(table)).v[c];
#else
	return Pairs(addrAdd(pc.params, table)).v[c];
#endif
}

// firstChunk holds each tensor's first chunk address when every tensor has
// one chunk (FLAG_ONE_CHUNK, the common case): loadChunks reads them once
// per invocation, and addressOf needs no table lookup per element.
addr_t firstChunk[NUM_TENSORS];

void loadChunks() {
	if ((FLAGS & FLAG_ONE_CHUNK) != 0u) {
		uint n = (FLAGS & FLAG_XTABLES) != 0u ? uint(NUM_TENSORS) : uint(T_ACC);
		for (uint t = 0u; t < n; t++) {
			firstChunk[t] = chunkBase(tableAt(t), 0u);
		}
	}
}

// addressOf returns the device address of byte offset o of tensor t.
addr_t addressOf(uint t, off_t o) {
#if INT64
	if ((FLAGS & FLAG_ONE_CHUNK) != 0u) {
		return firstChunk[t] + o;
	}
	uint64_t mask = (uint64_t(1) << pc.shift) - uint64_t(1);
	return chunkBase(tableAt(t), uint(o >> pc.shift)) + (o & mask);
#else
	if ((FLAGS & FLAG_ONE_CHUNK) != 0u) {
		return add64(firstChunk[t], o);
	}
	// Chunks are at least 16 bytes: 4 <= shift < 64.
	uint s = pc.shift;
	uint c = s >= 32u ? o.y >> (s - 32u) : (o.x >> s) | (o.y << (32u - s));
	uvec2 mask = s >= 32u ? uvec2(0xFFFFFFFFu, (1u << (s - 32u)) - 1u) : uvec2((1u << s) - 1u, 0u);
	return add64(chunkBase(tableAt(t), c), o & mask);
#endif
}

uint loadWord(uint t, off_t o) {
	return Word(addressOf(t, o)).w;
}

void storeWord(uint t, off_t o, uint v) {
	Word(addressOf(t, o)).w = v;
}

addr_t errorAddress() {
	return addrAdd(pc.params, pc.errAt);
}

// errorSet reports whether an earlier pass found a bad index. With
// FLAG_SKIP_BAD it is false: a bad index skips its own updates (resolve
// marks it NO_ROW, or the pass that reads it checks it) and every other
// update goes on.
bool errorSet() {
	if ((FLAGS & FLAG_SKIP_BAD) != 0u) {
		return false;
	}
	return Word(errorAddress()).w != NO_ERROR;
}

// skipped reports whether v, a normalised index resolve wrote, is a bad
// index that FLAG_SKIP_BAD skips.
bool skipped(uint v) {
	return (FLAGS & FLAG_SKIP_BAD) != 0u && v == NO_ROW;
}

// mix32 scatters the bits of a key over the slots of a hash table in
// workgroup memory (MurmurHash3's finaliser): rows that differ by
// multiples of a power of two would otherwise share a slot.
uint mix32(uint h) {
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
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
	return pos_t(pcBase()) + pos_t(invocation()) * pos_t(RUN);
}

// runEnd returns one past the last position of the run starting at p.
count_t runEnd(pos_t p) {
	return min(pcEnd(), count_t(p) + count_t(RUN));
}

// udiv returns n / d. With 32-bit positions it avoids the hardware divide
// (slow, and scalarised on CPU devices): m = ceil(2^32 / d) makes
// mulhi(n, m) either n / d or one more, and one remainder test fixes it.
// m is 0 when d is 1 or above 2^31, where the quotient is trivial.
pos_t udiv(pos_t n, param_t d, param_t m) {
#if POS_BITS == 64
	return n / d;
#else
	uint dd = uint(d);
	if (m == param_t(0)) {
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

off_t u32Offset(pos_t i) {
	return offsetOf(count_t(i), 4u);
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
