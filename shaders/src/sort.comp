// sort.comp: the stable sort behind the in-order fold (reduce.comp), and
// the exclusive scan it and the fold's slot starts need. Every stage's
// arguments come in the push constants' hot words (pc.hot).
//
// The sort orders the updates by slot (their target element, or their
// tuple's row) and keeps index order within a slot: a
// least-significant-digit radix sort over 8-bit digits of the slot,
// stable in every pass, carrying a value with every key: the update
// element itself where a slot is one element (so that the fold reads the
// updates in order), else the item's position. A pass is:
//
//   STAGE_RADIX_COUNT    every workgroup counts the digits of its tile of
//                        LOCAL_SIZE*run items (run SORT_RUN) into
//                        hist[digit*tiles + tile];
//   (scan)               an exclusive scan of hist, digit-major, gives each
//                        tile's first output position for each digit;
//   STAGE_RADIX_SCATTER  every workgroup sorts its tile by the digit in
//                        workgroup memory (by its two nibbles, each with
//                        one workgroup scan of per-invocation counts),
//                        and writes each key and value to its position.
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
// A_ELEM) and of the scan stages (A_N, A_X ... A_YOFF), the digit width
// RADIX_BITS and SORT_RUN are in abi_gen.glsl.

#define TILE (uint(LOCAL_SIZE) * RUN)

uint arg(uint i) {
	return pc.hot[i];
}

uint loadAt(uint t, uint i) {
	return Word(addressOf(t, offsetOf(count_t(i), 4u))).w;
}

void storeAt(uint t, uint i, uint v) {
	Word(addressOf(t, offsetOf(count_t(i), 4u))).w = v;
}

// group returns this workgroup's index over the whole stage: dispatches
// start at multiples of their groups' positions (gpu/dispatch.go).
uint group() {
	uint g = (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	return uint(pcBase() / count_t(TILE)) + g;
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
// The tile is sorted stably by the digit in workgroup memory, by its two
// nibbles (low, then high) with per-invocation nibble counts packed 16
// bits each (bump, field) and one workgroup scan of them per nibble, each
// invocation taking a run of RUN consecutive entries, so that the whole
// tile costs a few barriers; then every item goes to the tile's first
// output position for its digit plus its rank within the tile among the
// items of its digit.
// A tile holds at most LOCAL_SIZE * SORT_RUN = 4096 items, so no 16-bit
// field overflows and local indices fit 16 bits.
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

shared uint dbase[RADIX_DIGITS];  // the tile's first output position per digit
shared uint dstart[RADIX_DIGITS]; // its first position within the sorted tile
shared uint nibTotal[16];         // the tile's items per low nibble, then their scan
shared uint sorted[LOCAL_SIZE * SORT_RUN]; // by low nibble: local index | digit << 16

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
	off_t o = offsetOf(count_t(i), e);
	if (e >= 4u) {
		return Word(addressOf(T_UPD, offAdd(o, 4u * w))).w;
	}
	uint word = Word(addressOf(T_UPD, offAlign4(o))).w;
	return (word >> ((offLow(o) & 3u) * 8u)) & ((1u << (e * 8u)) - 1u);
}

void stage() {
	uint lid = gl_LocalInvocationID.x;
	uint tile = group();
	uint n = arg(A_N), tiles = arg(A_TILES);
	uint kin = arg(A_KIN), vin = arg(A_VIN), kout = arg(A_KOUT), vout = arg(A_VOUT), vwords = arg(A_VWORDS);
	uint run = min(RUN, SORT_RUN);
	uint tileFirst = tile * TILE;
	uint tileN = min(TILE, n - tileFirst);

	// The tile's count of digit lid, from the scanned counts (digit-major:
	// the next word is this one plus the count; n after the last).
	uint at = lid * tiles + tile;
	uint b = loadAt(T_HIST, at);
	uint c = (at + 1u < uint(RADIX_DIGITS) * tiles ? loadAt(T_HIST, at + 1u) : n) - b;
	dbase[lid] = b;
	dstart[lid] = c;
	barrier();
	if (lid == 0u) {
		// The low nibbles' totals and starts, and the digits' starts, in
		// one invocation: fewer barriers than a workgroup scan.
		for (uint k = 0u; k < 16u; k++) {
			nibTotal[k] = 0u;
		}
		for (uint d = 0u; d < uint(RADIX_DIGITS); d++) {
			nibTotal[d & 15u] += dstart[d];
		}
		uint acc = 0u;
		for (uint k = 0u; k < 16u; k++) {
			uint t = nibTotal[k];
			nibTotal[k] = acc;
			acc += t;
		}
		acc = 0u;
		for (uint d = 0u; d < uint(RADIX_DIGITS); d++) {
			uint t = dstart[d];
			dstart[d] = acc;
			acc += t;
		}
	}

	// By the low nibble: an invocation's run keeps item order.
	uint first = lid * run;
	uint digits[SORT_RUN];
	uvec4 lo = uvec4(0u), hi = uvec4(0u);
	for (uint r = 0u; r < SORT_RUN; r++) {
		if (r < run && first + r < tileN) {
			digits[r] = digitOf(loadAt(kin, tileFirst + first + r));
			bump(lo, hi, digits[r] & 15u);
		}
	}
	scan2(lo, hi); // also publishes dstart and the nibbles' starts
	for (uint r = 0u; r < SORT_RUN; r++) {
		uint q = first + r;
		if (r < run && q < tileN) {
			uint d = digits[r];
			uint nib = d & 15u;
			sorted[nibTotal[nib] + field(lo, hi, nib)] = q | (d << 16);
			bump(lo, hi, nib);
		}
	}
	barrier();

	// By the high nibble, over the entries in low-nibble order: the
	// position in the tile sorted by digit, stably.
	lo = uvec4(0u);
	hi = uvec4(0u);
	for (uint r = 0u; r < run; r++) {
		if (first + r < tileN) {
			bump(lo, hi, sorted[first + r] >> 20);
		}
	}
	scan2(lo, hi);
	for (uint r = 0u; r < run; r++) {
		uint q = first + r;
		if (q >= tileN) {
			break;
		}
		uint e = sorted[q];
		uint d = e >> 16, h = d >> 4;
		uint pos = dstart[h * 16u] + field(lo, hi, h);
		bump(lo, hi, h);
		uint dest = dbase[d] + pos - dstart[d];
		uint i = tileFirst + (e & 0xFFFFu);
		for (uint w = 0u; w < vwords; w++) {
			storeAt(vout, dest * vwords + w, loadValue(vin, i, w));
		}
		if (kout != T_NONE) {
			storeAt(kout, dest, loadAt(kin, i));
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
	if (errorSet() || count_t(group()) * count_t(TILE) >= pcEnd()) {
		return;
	}
	loadChunks();
	stage();
}
