#version 460
// sort.comp: the stable sort behind the in-order fold (reduce.comp), and
// the exclusive scan it and the fold's slot starts need. Every stage's
// arguments come in the push constants' hot words (pc.hot).
//
// The sort orders update positions by slot (their target element, or
// their tuple's row) and keeps index order within a slot: a
// least-significant-digit radix sort over 8-bit digits of the slot,
// stable in every pass, carrying a value with every key: the update
// element itself where a slot is one element (so that the fold reads the
// updates in order), else the item's position. A pass is:
//
//   STAGE_RADIX_COUNT    every workgroup counts the digits of its tile of
//                        LOCAL_SIZE*run items into hist[digit*tiles + tile];
//   (scan)               an exclusive scan of hist, digit-major, gives each
//                        tile's first output position for each digit;
//   STAGE_RADIX_SCATTER  every workgroup ranks its items within the tile,
//                        in rounds of LOCAL_SIZE consecutive items (a bit
//                        mask per digit shows the lower invocations of
//                        the round with the same digit), and writes each
//                        key and value to its position.
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
#if RADIX_DIGITS != LOCAL_SIZE
#error sort.comp: one invocation per digit
#endif
// A tile's items are taken in RUN rounds of LOCAL_SIZE consecutive items,
// one per invocation: item of round r and invocation lid.
uint itemOf(uint tile, uint r, uint lid) {
	return tile * TILE + r * uint(LOCAL_SIZE) + lid;
}

uint digitOf(uint key) {
	return (key >> arg(A_SHIFT)) & (uint(RADIX_DIGITS) - 1u);
}
#endif

#if STAGE == STAGE_RADIX_COUNT
shared uint hist[RADIX_DIGITS];

void stage() {
	uint lid = gl_LocalInvocationID.x;
	hist[lid] = 0u;
	barrier();
	uint tile = group();
	uint n = arg(A_N), kin = arg(A_KIN);
	for (uint r = 0u; r < RUN; r++) {
		uint i = itemOf(tile, r, lid);
		if (i < n) {
			atomicAdd(hist[digitOf(loadAt(kin, i))], 1u);
		}
	}
	barrier();
	storeAt(T_HIST, lid * arg(A_TILES) + tile, hist[lid]);
}
#elif STAGE == STAGE_RADIX_SCATTER
// An item's rank among the tile's items of its digit: the items of that
// digit in earlier rounds (base, which starts at the tile's first output
// position for the digit) and those of lower invocations in its round,
// which masks shows: one bit per invocation, MASK_WORDS words per digit.
// Each invocation sets and clears its own bit only, atomically, so that
// a round's clears need no barrier before the next round's sets.
#define MASK_WORDS (uint(LOCAL_SIZE) / 32u)
shared uint base[RADIX_DIGITS];
shared uint masks[RADIX_DIGITS * MASK_WORDS];

// loadValue returns the words of the value of item i: its position, the
// update element at position i (A_VIN T_UPD, A_ELEM bytes, zero-extended)
// or the words of a value tensor; w of A_VWORDS.
uint loadValue(uint vin, uint i, uint w) {
	if (vin == T_NONE) {
		return i;
	}
	if (vin != T_UPD) {
		return loadAt(vin, i * arg(A_VWORDS) + w);
	}
	uint e = arg(A_ELEM);
	uint64_t o = uint64_t(i) * uint64_t(e);
	if (e >= 4u) {
		return Word(addressOf(T_UPD, o + uint64_t(4u * w))).w;
	}
	uint word = Word(addressOf(T_UPD, o & ~3ul)).w;
	return (word >> (uint(o & 3ul) * 8u)) & ((1u << (e * 8u)) - 1u);
}

void stage() {
	uint lid = gl_LocalInvocationID.x;
	uint tile = group();
	uint n = arg(A_N);
	uint kin = arg(A_KIN), vin = arg(A_VIN), kout = arg(A_KOUT), vout = arg(A_VOUT), vwords = arg(A_VWORDS);
	base[lid] = loadAt(T_HIST, lid * arg(A_TILES) + tile);
	for (uint w = 0u; w < MASK_WORDS; w++) {
		masks[lid * MASK_WORDS + w] = 0u;
	}
	barrier(); // base loaded, masks zeroed
	uint word = lid / 32u, bit = 1u << (lid % 32u);
	for (uint r = 0u; r < RUN; r++) {
		uint i = itemOf(tile, r, lid);
		bool valid = i < n;
		uint key = 0u, d = 0u;
		if (valid) {
			key = loadAt(kin, i);
			d = digitOf(key);
			atomicOr(masks[d * MASK_WORDS + word], bit);
		}
		barrier(); // the round's bits are set, the last round's base added
		uint rank = 0u, total = 0u;
		if (valid) {
			for (uint w = 0u; w < MASK_WORDS; w++) {
				uint m = masks[d * MASK_WORDS + w];
				total += uint(bitCount(m));
				if (w < word) {
					rank += uint(bitCount(m));
				}
			}
			rank += uint(bitCount(masks[d * MASK_WORDS + word] & (bit - 1u)));
			uint dest = base[d] + rank;
			for (uint w = 0u; w < vwords; w++) {
				storeAt(vout, dest * vwords + w, loadValue(vin, i, w));
			}
			if (kout != T_NONE) {
				storeAt(kout, dest, key);
			}
		}
		barrier(); // every rank is read
		if (valid) {
			atomicAnd(masks[d * MASK_WORDS + word], ~bit);
			if (rank == total - 1u) {
				base[d] += total; // the digit's last item this round
			}
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
