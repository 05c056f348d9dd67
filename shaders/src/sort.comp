#version 460
// sort.comp: the stable sort behind the in-order fold (reduce.comp), and
// the exclusive scan it and the fold's slot starts need. Every stage's
// arguments come in the push constants' hot words (pc.hot).
//
// The sort orders update positions by slot (their target element, or
// their tuple's row) and keeps index order within a slot: a
// least-significant-digit radix sort over 4-bit digits of the slot,
// stable in every pass. A pass is:
//
//   STAGE_RADIX_COUNT    every workgroup counts the digits of its tile of
//                        LOCAL_SIZE*run items into hist[digit*tiles + tile];
//   (scan)               an exclusive scan of hist, digit-major, gives each
//                        tile's first output position for each digit;
//   STAGE_RADIX_SCATTER  every workgroup ranks its items within the tile
//                        (a workgroup scan of per-invocation digit counts;
//                        an invocation's run of items stays in order) and
//                        writes each key and value to its position.
//
// The scan over n words, in place: STAGE_SCAN_UP scans each block of
// LOCAL_SIZE*run words and writes the block's total to the next level;
// the host scans the levels up to one block, then STAGE_SCAN_DOWN adds
// each level's scanned totals back into the blocks below.
//
// Positions are 32-bit: the in-order fold takes at most 2^31 items and
// slots.
//
// Variant macros: STAGE, one of the four above.

#include "common.glsl"

// The stages (STAGE_*), the arguments of the radix stages (A_N ...
// A_VOUT) and of the scan stages (A_N, A_X ... A_YOFF), and the digit
// width RADIX_BITS are in abi_gen.glsl.

#define TILE (uint(LOCAL_SIZE) * RUN)

uint arg(uint i) {
	return pc.hot[i];
}

uint loadAt(uint t, uint i) {
	return Word(addressOf(t, uint64_t(i) * 4ul)).w;
}

void storeAt(uint t, uint i, uint v) {
	Word(addressOf(t, uint64_t(i) * 4ul)).w = v;
}

// group returns this workgroup's index over the whole stage: dispatches
// start at multiples of their groups' positions (gpu/dispatch.go).
uint group() {
	uint g = (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	return uint(pc.base / uint64_t(TILE)) + g;
}

// Workgroup-wide exclusive scan of one uvec4 per invocation, two at a
// time; every invocation must call it. Three barriers: NSEG invocations
// scan segments of SEG entries each, one scans the segment totals, and
// every invocation adds its segment's offset. (A Hillis-Steele scan takes
// two barriers per step, 16 in all, and barriers are what costs most on
// CPU devices, which run a workgroup as a series of SIMD batches.)
#define SEG 8u
#define NSEG (uint(LOCAL_SIZE) / SEG)
shared uvec4 scanA[LOCAL_SIZE];
shared uvec4 scanB[LOCAL_SIZE];
shared uvec4 segA[NSEG];
shared uvec4 segB[NSEG];

void scan2(inout uvec4 a, inout uvec4 b) {
	uint i = gl_LocalInvocationID.x;
	scanA[i] = a;
	scanB[i] = b;
	barrier();
	if (i < NSEG) {
		uvec4 sa = uvec4(0u), sb = uvec4(0u);
		for (uint k = i * SEG; k < (i + 1u) * SEG; k++) {
			uvec4 ta = scanA[k], tb = scanB[k];
			scanA[k] = sa;
			scanB[k] = sb;
			sa += ta;
			sb += tb;
		}
		segA[i] = sa;
		segB[i] = sb;
	}
	barrier();
	if (i == 0u) {
		uvec4 sa = uvec4(0u), sb = uvec4(0u);
		for (uint k = 0u; k < NSEG; k++) {
			uvec4 ta = segA[k], tb = segB[k];
			segA[k] = sa;
			segB[k] = sb;
			sa += ta;
			sb += tb;
		}
	}
	barrier();
	a = scanA[i] + segA[i / SEG];
	b = scanB[i] + segB[i / SEG];
}

#if STAGE == STAGE_RADIX_COUNT || STAGE == STAGE_RADIX_SCATTER
uint digitOf(uint i) {
	return (loadAt(arg(A_KIN), i) >> arg(A_SHIFT)) & (uint(RADIX_DIGITS) - 1u);
}
#endif

#if STAGE == STAGE_RADIX_COUNT
shared uint hist[RADIX_DIGITS];

void stage() {
	uint lid = gl_LocalInvocationID.x;
	if (lid < uint(RADIX_DIGITS)) {
		hist[lid] = 0u;
	}
	barrier();
	uint tile = group();
	uint n = arg(A_N);
	uint first = tile * TILE + lid * RUN;
	for (uint r = 0u; r < RUN; r++) {
		uint i = first + r;
		if (i < n) {
			atomicAdd(hist[digitOf(i)], 1u);
		}
	}
	barrier();
	if (lid < uint(RADIX_DIGITS)) {
		storeAt(T_HIST, lid * arg(A_TILES) + tile, hist[lid]);
	}
}
#elif STAGE == STAGE_RADIX_SCATTER
// Digit counts packed 16 bits each: digits 0-7 in lo, 8-15 in hi. A tile
// holds at most LOCAL_SIZE * 16 = 4096 items, so no field overflows.
#if RADIX_DIGITS != 16
#error sort.comp: bump and field pack exactly 16 digit counts
#endif
void bump(inout uvec4 lo, inout uvec4 hi, uint d) {
	uint inc = 1u << ((d & 1u) * 16u);
	uint c = (d >> 1) & 3u;
	if (d < 8u) {
		lo[c] += inc;
	} else {
		hi[c] += inc;
	}
}

uint field(uvec4 lo, uvec4 hi, uint d) {
	uint w = d < 8u ? lo[(d >> 1) & 3u] : hi[(d >> 1) & 3u];
	return (w >> ((d & 1u) * 16u)) & 0xFFFFu;
}

shared uint base[RADIX_DIGITS];

void stage() {
	uint lid = gl_LocalInvocationID.x;
	uint tile = group();
	uint n = arg(A_N);
	uint tiles = arg(A_TILES);
	if (lid < uint(RADIX_DIGITS)) {
		// The tile's first output position per digit (scan2's barriers
		// publish it).
		base[lid] = loadAt(T_HIST, lid * tiles + tile);
	}
	uint first = tile * TILE + lid * RUN;
	uvec4 lo = uvec4(0u), hi = uvec4(0u);
	for (uint r = 0u; r < RUN; r++) {
		if (first + r < n) {
			bump(lo, hi, digitOf(first + r));
		}
	}
	scan2(lo, hi); // now: this invocation's first rank within the tile, per digit
	uint vin = arg(A_VIN), kout = arg(A_KOUT), vout = arg(A_VOUT);
	for (uint r = 0u; r < RUN; r++) {
		uint i = first + r;
		if (i >= n) {
			break;
		}
		uint key = loadAt(arg(A_KIN), i);
		uint d = (key >> arg(A_SHIFT)) & (uint(RADIX_DIGITS) - 1u);
		uint dest = base[d] + field(lo, hi, d);
		bump(lo, hi, d);
		storeAt(vout, dest, vin == T_NONE ? i : loadAt(vin, i));
		if (kout != T_NONE) {
			storeAt(kout, dest, key);
		}
	}
}
#elif STAGE == STAGE_SCAN_UP
void stage() {
	uint lid = gl_LocalInvocationID.x;
	uint b = group();
	uint n = arg(A_N), x = arg(A_X), off = arg(A_XOFF);
	uint first = b * TILE + lid * RUN;
	uint sum = 0u;
	for (uint r = 0u; r < RUN; r++) {
		if (first + r < n) {
			sum += loadAt(x, off + first + r);
		}
	}
	uvec4 a = uvec4(sum, 0u, 0u, 0u), z = uvec4(0u);
	scan2(a, z);
	uint acc = a.x;
	for (uint r = 0u; r < RUN; r++) {
		uint i = first + r;
		if (i < n) {
			uint v = loadAt(x, off + i);
			storeAt(x, off + i, acc);
			acc += v;
		}
	}
	if (lid == uint(LOCAL_SIZE) - 1u && arg(A_Y) != T_NONE) {
		storeAt(arg(A_Y), arg(A_YOFF) + b, acc);
	}
}
#elif STAGE == STAGE_SCAN_DOWN
void stage() {
	uint lid = gl_LocalInvocationID.x;
	uint b = group();
	uint n = arg(A_N), x = arg(A_X), off = arg(A_XOFF);
	uint add = loadAt(arg(A_Y), arg(A_YOFF) + b);
	uint first = b * TILE + lid * RUN;
	for (uint r = 0u; r < RUN; r++) {
		uint i = first + r;
		if (i < n) {
			storeAt(x, off + i, loadAt(x, off + i) + add);
		}
	}
}
#else
#error sort.comp: unknown STAGE
#endif

void main() {
	// Uniform across the workgroup: every invocation reaches the barriers.
	// Workgroups past the end (a grid rounded up) have no tile.
	if (errorSet() || uint64_t(group()) * uint64_t(TILE) >= pc.end) {
		return;
	}
	loadChunks();
	stage();
}
