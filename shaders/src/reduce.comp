// reduce.comp: the element-wise passes of the reductions, one position per
// output element (prepare, finish) or per slot element (fold). The phase
// and its arguments come in the push constants' hot words (pc.hot), not
// in the parameter array.
//
//   PHASE_PREPARE  (before scatter.comp; ScatterElementsUpdate-12) every
//                  element that receives updates (count > 0) starts from
//                  the neutral value when use_init_val is false, and the
//                  64-bit mean sums (T_ACC) start from the element or 0.
//   PHASE_FINISH   (after scatter.comp; mean) divides the sums by the
//                  counts, plus one when use_init_val counts the element.
//   PHASE_FOLD     the in-order fold, after the sort (sort.comp) listed the
//                  update positions of every slot in index order: one
//                  invocation per slot and inner element walks them and
//                  folds them into the element from the first to the last,
//                  exactly as the CPU reference does; where a slot is
//                  one element the sort carried the updates themselves
//                  (A_VALS), which the fold then reads in order. Used for float sum,
//                  sub, prod and mean in deterministic mode (and for small
//                  plans), and wherever the atomics an element type needs
//                  are missing. An invocation folds at most SEGMENT
//                  updates: segment A_SEG of its slot's list. Segment 0
//                  runs over every slot; a slot with more updates keeps
//                  its partial fold in the output (the mean's 64-bit sum
//                  in T_ACC) and is appended to the list A_LIST (a count,
//                  then slots), and each further pass folds the next
//                  segment of every listed slot, from the partial fold,
//                  in order. Segment 0 also raises the word after the
//                  error word to the longest such list, so that the host
//                  runs only the further passes it needs. The rounding
//                  of every step is the CPU reference's, so the result
//                  is too.
//
// Slots are output elements (ELEMENT plans, A_INNER 1) or index tuples'
// rows of A_INNER elements each (BLOCK plans). T_OWNER holds the count of
// updates per slot (prepare, finish) or, after the scan, the first sorted
// position of every slot and one past the last (fold).
//
// Variant macros: DTYPE and POS_BITS (see reduce.glsl and common.glsl);
// the reduction is specialization constant RED.

#include "common.glsl"
#include "reduce.glsl"

// The arguments (A_PHASE ... A_LIST) and phases (PHASE_*) are in
// abi_gen.glsl.

bool useInit() {
	return (FLAGS & FLAG_USE_INIT) != 0u;
}

uint countAt(pos_t s) {
	return Word(addressOf(T_OWNER, u32Offset(s))).w;
}

// finishMean returns the mean of sum s over c operands.
#if !INT64 && (MEAN_ACC64 || (IS_INT && IS_SIGNED && ELEM_BYTES == 8))
// The signed 64-bit mean on pairs: the quotient of |s| by c, negated and
// lowered by one for a negative s with a remainder (toward negative
// infinity, as below).
E_T meanOf(idx_t s, uint c) {
	bool neg = sNegative(s);
	uint r;
	uvec2 q = udiv64(neg ? sNeg(s) : s, c, r);
	if (neg) {
		q = sNeg(q);
		if (r != 0u) {
			q = sAdd(q, uvec2(0xFFFFFFFFu));
		}
	}
#if ELEM_BYTES == 8
	return q;
#else
	return q.x & E_MASK;
#endif
}
#elif !INT64 && IS_INT && ELEM_BYTES == 8
E_T meanOf(E_T s, uint c) {
	uint r;
	return udiv64(s, c, r);
}
#elif MEAN_ACC64
E_T meanOf(int64_t s, uint c) {
	// Round toward negative infinity (-2.5 -> -3).
	int64_t n = int64_t(uint64_t(c));
	int64_t q = s / n;
	if (q * n != s && s < 0l) {
		q -= 1l;
	}
	return E_T(uint64_t(q)) & E_MASK;
}
#elif IS_INT
E_T meanOf(E_T s, uint c) {
#if IS_SIGNED
	int64_t v = int64_t(s), n = int64_t(uint64_t(c));
	int64_t q = v / n;
	if (q * n != v && v < 0l) {
		q -= 1l;
	}
	return uint64_t(q);
#else
	return s / uint64_t(c);
#endif
}
#elif IS_FLOAT && !defined(E_PAIRS)
E_T meanOf(E_T s, uint c) {
	return divRound(s, c);
}
#elif IS_FLOAT
// The baseline's float64 variants take min and max only (reduce.glsl): no
// mean reaches here.
E_T meanOf(E_T s, uint c) {
	return s;
}
#endif

void prepare(pos_t t) {
	if (countAt(t) == 0u) {
		return;
	}
#if MEAN_ACC64
	if (RED == RED_MEAN) {
		storeAcc(t, useInit() ? value64(loadElem(T_OUT, t)) : idx_t(0));
		return;
	}
#endif
	if (!useInit()) {
		storeElem(t, initNeutral());
	}
}

void finish(pos_t t) {
	uint c = countAt(t);
	if (c == 0u) {
		return;
	}
	if (useInit()) {
		c++;
	}
#if MEAN_ACC64
	storeElem(t, meanOf(loadAcc(t), c));
#elif DTYPE != DT_BOOL
	storeElem(t, meanOf(loadElem(T_OUT, t), c));
#endif
}

// sortedValue returns sorted value i of tensor vals: the update element
// the sort carried (sort.comp), in one 32-bit word, or two for 8 bytes.
E_T sortedValue(uint vals, uint i) {
#if ELEM_BITS == 64
	off_t o = offsetOf(count_t(i), 8u);
	return ePair(loadWord(vals, o), loadWord(vals, offAdd(o, 4u)));
#else
	return E_T(loadWord(vals, offsetOf(count_t(i), 4u)));
#endif
}

void fold(pos_t p) {
#if POS_BITS == 64
	pos_t inner = pos_t(packUint2x32(uvec2(pc.hot[A_INNER_LO], pc.hot[A_INNER_HI])));
#else
	pos_t inner = pc.hot[A_INNER_LO]; // 32-bit positions: the high word is 0
#endif
	uint seg = pc.hot[A_SEG];
	uint list = pc.hot[A_LIST];
	pos_t s = inner == pos_t(1) ? p : p / inner;
	pos_t k = p - s * inner;
	if (seg > 0u) {
		// Positions count the listed slots' elements.
		if (count_t(s) >= count_t(loadWord(list, off_t(0)))) {
			return;
		}
		s = pos_t(loadWord(list, u32Offset(s + pos_t(1))));
		p = s * inner + k;
	}
	uint first = countAt(s);
	uint last = countAt(s + pos_t(1));
	if (first == last) {
		return; // no update: the element keeps data
	}
	// Positions and counts are below 2^31, so no sum here wraps.
	uint from = first + seg * SEGMENT;
	if (from >= last) {
		return;
	}
	uint to = last - from > SEGMENT ? from + SEGMENT : last;
	uint perm = pc.hot[A_PERM], vals = pc.hot[A_VALS];
	bool init = useInit();
	E_T acc = seg > 0u || init ? loadElem(T_OUT, p) : initNeutral();
#if MEAN_ACC64
	idx_t sum = idx_t(0);
	if (RED == RED_MEAN) {
		sum = seg > 0u ? loadAcc(p) : (init ? value64(acc) : idx_t(0));
	}
#endif
	for (uint i = from; i < to; i++) {
		E_T x;
		if (vals != T_NONE) {
			x = sortedValue(vals, i);
		} else {
			uint pos = perm == T_NONE ? i : Word(addressOf(perm, offsetOf(count_t(i), 4u))).w;
			x = loadElem(T_UPD, pos_t(pos) * inner + k);
		}
#if MEAN_ACC64
		if (RED == RED_MEAN) {
			sum = sAdd(sum, value64(x));
			continue;
		}
#endif
#if DTYPE != DT_BOOL
		if (RED == RED_SUB) {
			x = negate(x);
		}
#endif
		acc = combine(acc, x);
	}
	if (to < last) {
		// More segments follow: keep the partial fold for the next pass.
#if MEAN_ACC64
		if (RED == RED_MEAN) {
			storeAcc(p, sum);
		}
#endif
		storeElem(p, acc);
		if (seg == 0u && k == pos_t(0)) {
			uint at = atomicAdd(Word(addressOf(list, off_t(0))).w, 1u);
			storeWord(list, u32Offset(pos_t(at) + pos_t(1)), uint(s));
			// The word after the error word: the longest list, which
			// the host reads with the error word to record as many
			// further passes as it needs.
			atomicMax(Word(addrAdd(errorAddress(), 4u)).w, last - first);
		}
		return;
	}
#if MEAN_ACC64
	if (RED == RED_MEAN) {
		acc = meanOf(sum, last - first + (init ? 1u : 0u));
	}
#elif DTYPE != DT_BOOL
	if (RED == RED_MEAN) {
		acc = meanOf(acc, last - first + (init ? 1u : 0u));
	}
#endif
	storeElem(p, acc);
}

#ifdef BUCKET
// The bucketed fold (PHASE_FOLD in the BUCKET variants), after one pass of
// the radix sort by the slot's top digit: the items of every bucket (the
// slots that share the digit, B_SLOTS of them at most) lie together, in
// index order, with their slots (A_BKEYS) and values (A_VALS). One
// workgroup folds one bucket, in workgroup memory: it loads the bucket's
// elements, takes its items LOCAL_SIZE at a time (a chunk, one per
// invocation) and stores the elements back. Within a chunk, rounds: every
// item not yet folded claims its slot's tag (a hash of the slot) with its
// place in the chunk, and the claim that holds, the first of that tag,
// folds its item and every item right after it of the same slot, in
// order. The others wait for a later round. An item is folded only after
// every earlier item of its slot, in this chunk (which would have claimed
// first, or been folded by the run of one that did) and in every earlier
// chunk, so each element sees its updates in index order, as the CPU
// reference does.
//
// A pass folds chunks while the steps its invocations take stay within
// SEGMENT: each chunk costs its rounds plus the longest run of each round.
// A bucket that is not done keeps its partial fold in the output, and its
// next item and its place in a list in A_LIST (B_LIST); pass 0 raises the
// word after the error word to SEGMENT plus twice the items left, so that
// the host records enough further passes (A_SEG > 0): each takes at least
// SEGMENT/2 items of every bucket not yet done, so that pass s has at most
// items/(s*SEGMENT/2+1) buckets to fold and the host launches no more
// workgroups.
//
// Split (A_BSPLIT > 0): the sort took two radix passes, by the digit
// A_BSPLIT bits under the top one and then by the top digit, so that a
// digit's items lie in order of the slot's top 8+A_BSPLIT bits (index
// order within them), and every digit's bucket is split into 1<<A_BSPLIT
// buckets of 1<<A_BSHIFT slots, a workgroup each: each finds its items by
// a binary search of its digit's sorted slots.
#define B_SLOTS (ELEM_BYTES == 8 ? uint(BUCKET_WORDS) / 2u : uint(BUCKET_WORDS))
#define B_TAGS 1024u
#define NO_TAG 0xFFFFFFFFu
shared E_T accS[B_SLOTS];
shared uint tagS[B_TAGS];
shared uint slotS[LOCAL_SIZE];
shared E_T valS[LOCAL_SIZE];
shared uint foldedS[LOCAL_SIZE];
shared uint ctlS[4]; // items left, by round parity; the longest run, by parity

// bucketStep folds x into a, as the fold does.
E_T bucketStep(E_T a, E_T x) {
#if DTYPE != DT_BOOL
	if (RED == RED_SUB) {
		x = negate(x);
	}
#endif
	return combine(a, x);
}

// T_LIST of the bucketed fold: three lists of the buckets not yet done
// (a count, then a word per bucket: RADIX_DIGITS << A_BSPLIT, nb in
// bucketFold), then each bucket's next item.
// Pass s > 0 takes the buckets of list s%3, appends those it leaves
// unfinished to list (s+1)%3 and empties list (s+2)%3, which pass s+1
// fills (pass 0 takes every bucket, after the host zeroed T_LIST).
#define B_LIST(l) ((l) * (1u + nb))
#define B_NEXT(b) (B_LIST(3u) + (b))

uint listWord(uint list, uint w) {
	return loadWord(list, u32Offset(pos_t(w)));
}

// lowerBound returns the first item in [lo, hi) whose slot in keys is at
// least slot, or hi: the items are in order of the slots' top bits, so
// those of slots under the bucket's first come first. At most 32 steps.
uint lowerBound(uint keys, uint lo, uint hi, uint slot) {
	while (lo < hi) {
		uint mid = lo + (hi - lo) / 2u;
		if (loadWord(keys, u32Offset(pos_t(mid))) < slot) {
			lo = mid + 1u;
		} else {
			hi = mid;
		}
	}
	return lo;
}

void bucketFold(uint g) {
	uint lid = gl_LocalInvocationID.x;
	uint tiles = pc.hot[A_BTILES], items = pc.hot[A_BITEMS], shift = pc.hot[A_BSHIFT];
	uint keys = pc.hot[A_BKEYS], vals = pc.hot[A_VALS], list = pc.hot[A_LIST], seg = pc.hot[A_SEG];
	uint split = min(pc.hot[A_BSPLIT], uint(BUCKET_SPLIT_BITS));
	uint nb = uint(RADIX_DIGITS) << split;
	if (g == 0u && lid == 0u) {
		storeWord(list, u32Offset(pos_t(B_LIST((seg + 2u) % 3u))), 0u);
	}
	// Workgroup g takes bucket g in pass 0, else the listed bucket g.
	uint b = g;
	if (seg > 0u) {
		uint l = B_LIST(seg % 3u);
		if (g >= listWord(list, l)) {
			return; // the same for every invocation
		}
		b = listWord(list, l + 1u + g);
	}
	// The bucket's items: from its digit's start in the scanned tile
	// counts to the next digit's, and of a split bucket those of its
	// slots among them.
	uint d = b >> split;
	uint lo = loadWord(T_HIST, u32Offset(pos_t(d * tiles)));
	uint hi = d + 1u < uint(RADIX_DIGITS) ? loadWord(T_HIST, u32Offset(pos_t((d + 1u) * tiles))) : items;
	uint base = b << shift;
	if (split > 0u) {
		uint end = lowerBound(keys, lo, hi, base + (1u << shift));
		lo = lowerBound(keys, lo, end, base);
		hi = end;
	}
	uint from = seg == 0u ? lo : listWord(list, B_NEXT(b));
	if (from >= hi) {
		return; // the same for every invocation
	}
	uint nslots = min(1u << shift, pc.hot[A_BSLOTS] - base);
	for (uint i = lid; i < nslots; i += uint(LOCAL_SIZE)) {
		accS[i] = loadElem(T_OUT, pos_t(base + i));
	}
	for (uint i = lid; i < B_TAGS; i += uint(LOCAL_SIZE)) {
		tagS[i] = NO_TAG;
	}
	if (lid < 4u) {
		ctlS[lid] = 0u;
	}
	barrier();
	uint steps = 0u, at = from, round = 0u;
	while (at < hi && steps + 2u * uint(LOCAL_SIZE) <= uint(SEGMENT)) {
		uint i = at + lid;
		bool pending = i < hi;
		uint slot = NO_TAG;
		if (pending) {
			slot = loadWord(keys, u32Offset(pos_t(i))) - base;
			valS[lid] = sortedValue(vals, i);
		}
		slotS[lid] = slot;
		foldedS[lid] = 0u;
		barrier();
		for (;;) {
			uint par = round & 1u;
			uint tag = slot & (B_TAGS - 1u);
			if (pending) {
				atomicMin(tagS[tag], lid);
			}
			barrier();
			if (lid == 0u) {
				// The next round's counters, which every invocation
				// read before the barrier above.
				ctlS[par ^ 1u] = 0u;
				ctlS[2u + (par ^ 1u)] = 0u;
			}
			bool wins = pending && tagS[tag] == lid;
			if (wins) {
				E_T a = bucketStep(accS[slot], valS[lid]);
				uint k = lid + 1u;
				for (; k < uint(LOCAL_SIZE) && slotS[k] == slot; k++) {
					a = bucketStep(a, valS[k]);
					foldedS[k] = 1u;
				}
				accS[slot] = a;
				atomicMax(ctlS[2u + par], k - lid);
			}
			barrier();
			if (wins) {
				tagS[tag] = NO_TAG;
			}
			if (wins || foldedS[lid] != 0u) {
				pending = false;
			}
			if (pending) {
				atomicAdd(ctlS[par], 1u);
			}
			barrier();
			uint left = ctlS[par];
			steps += 1u + ctlS[2u + par];
			round++;
			if (left == 0u) {
				break;
			}
		}
		at += uint(LOCAL_SIZE);
	}
	barrier();
	for (uint i = lid; i < nslots; i += uint(LOCAL_SIZE)) {
		storeElem(pos_t(base + i), accS[i]);
	}
	if (lid == 0u && (seg > 0u || at < hi)) {
		// A listed bucket's next item, past the end once it is done.
		storeWord(list, u32Offset(pos_t(B_NEXT(b))), min(at, hi));
	}
	if (lid == 0u && at < hi) {
		uint l = B_LIST((seg + 1u) % 3u);
		uint k = atomicAdd(Word(addressOf(list, u32Offset(pos_t(l)))).w, 1u);
		storeWord(list, u32Offset(pos_t(l + 1u + k)), b);
		if (seg == 0u) {
			atomicMax(Word(addrAdd(errorAddress(), 4u)).w, uint(SEGMENT) + 2u * (hi - at));
		}
	}
}

void main() {
	// One workgroup per bucket, every invocation with a position: the
	// host dispatches LOCAL_SIZE positions per bucket, one each. An error
	// word set by resolve is set for the whole pass.
	pos_t p = firstPosition();
	if (errorSet()) {
		return;
	}
	loadChunks();
	bucketFold(uint(p) / uint(LOCAL_SIZE));
}
#else
void main() {
	pos_t p = firstPosition();
	count_t end = runEnd(p);
	if (count_t(p) >= end || errorSet()) {
		return;
	}
	loadChunks();
	uint phase = pc.hot[A_PHASE];
	for (; count_t(p) < end; p++) {
		if (phase == PHASE_PREPARE) {
			prepare(p);
		} else if (phase == PHASE_FINISH) {
			finish(p);
		} else {
			fold(p);
		}
	}
}
#endif
