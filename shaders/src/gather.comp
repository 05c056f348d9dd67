// gather.comp: the output-major form of the BLOCK scatter with reduction
// none (ScatterUpdate, ScatterNDUpdate, ScatterND), for plans with more
// update units than output units. After resolve.comp, owner[v] holds j+1
// of the last update claiming row v (0: none), which inverts the scatter:
// output unit t = (o*ROWS + v)*Inner + k receives update unit
// u = (o*J + owner[v]-1)*Inner + k, or keeps data. Visiting each output
// unit once costs the same however many updates lose; one invocation per
// update would pay for every one of them.
//
// An invocation handles pc.run consecutive positions. Positions, Inner and
// the counts are in units (one or several elements, see gpu/plan.go).
//
// Variant macros (besides common.glsl's):
//   ELEM_BYTES  the unit size: 1, 2, 4, 8 or 16. For 1 and 2 bytes a
//               position is a whole 32-bit word of the output, which no
//               other invocation touches, so no atomics are needed.

#include "common.glsl"

#if ELEM_BYTES >= 4
void copyUnit(pos_t u, pos_t t) {
#if ELEM_BYTES == 16
	Word4(addressOf(T_OUT, offsetOf(count_t(t), 16u))).v = Word4(addressOf(T_UPD, offsetOf(count_t(u), 16u))).v;
#elif ELEM_BYTES == 8
	Word2(addressOf(T_OUT, offsetOf(count_t(t), 8u))).v = Word2(addressOf(T_UPD, offsetOf(count_t(u), 8u))).v;
#else
	Word(addressOf(T_OUT, offsetOf(count_t(t), 4u))).w = loadWord(T_UPD, offsetOf(count_t(u), 4u));
#endif
}
#else
#define PER_WORD (4 / ELEM_BYTES)
#endif

void main() {
	pos_t t = firstPosition();
	// Nothing is written once a bad index was found (the host discards
	// the output then, but a partial scatter is never worth computing).
	if (count_t(t) >= pcEnd() || errorSet()) {
		return;
	}
	loadChunks();
	pos_t inner = pos_t(param(P_INNER));
	pos_t rows = pos_t(param(P_ROWS));
	pos_t jn = pos_t(param(P_J));
#if ELEM_BYTES >= 4
	// t = (o*rows + v)*inner + k, stepped incrementally along the run.
	pos_t end = pos_t(runEnd(t));
	if (t >= end) {
		return;
	}
	pos_t r = udiv(t, param(P_INNER), param(P_MAGIC_INNER));
	pos_t k = t - r * inner;
	pos_t o = udiv(r, param(P_ROWS), param(P_MAGIC_ROWS));
	pos_t v = r - o * rows;
	uint w = owner(v);
	for (; t < end; t++) {
		if (w != 0u) {
			copyUnit((o * jn + pos_t(w - 1u)) * inner + k, t);
		}
		if (++k == inner) {
			k = pos_t(0);
			if (++v == rows) {
				v = pos_t(0);
				o++;
			}
			if (t + pos_t(1) < end) {
				w = owner(v);
			}
		}
	}
#else
	// t counts output words; the last may run past the tensor into the
	// buffer's padding, which is never read back.
	count_t outputs = count_t(param(P_OUTPUTS));
	count_t end = runEnd(t);
	for (; count_t(t) < end; t++) {
		addr_t a = addressOf(T_OUT, offsetOf(count_t(t), 4u));
		uint word = Word(a).w;
		bool changed = false;
		for (uint e = 0u; e < uint(PER_WORD); e++) {
			pos_t x = t * pos_t(PER_WORD) + pos_t(e);
			if (count_t(x) >= outputs) {
				break;
			}
			pos_t r = udiv(x, param(P_INNER), param(P_MAGIC_INNER));
			pos_t k = x - r * inner;
			pos_t o = udiv(r, param(P_ROWS), param(P_MAGIC_ROWS));
			uint w = owner(r - o * rows);
			if (w == 0u) {
				continue;
			}
			off_t s = offsetOf(count_t((o * jn + pos_t(w - 1u)) * inner + k), uint(ELEM_BYTES));
			uint bits = loadWord(T_UPD, offAlign4(s)) >> ((offLow(s) & 3u) * 8u);
			word = bitfieldInsert(word, bits, int(e) * ELEM_BYTES * 8, ELEM_BYTES * 8);
			changed = true;
		}
		if (changed) {
			Word(a).w = word;
		}
	}
#endif
}
