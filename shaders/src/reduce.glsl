// reduce.glsl: element types and reduction steps, shared by scatter.comp
// (reductions applied with atomics) and reduce.comp (prepare, finish and
// the in-order fold). Include it after common.glsl.
//
// The results are the CPU reference's bit for bit (specs/README.md):
// integers wrap in their width; bool sum, sub, prod, min and max are OR,
// XOR, AND, AND and OR with results 0 or 1; a float16 or bfloat16 step is
// computed in float32 and rounded to the type (ties to even) by bit
// arithmetic that mirrors tensor.F16From and tensor.BF16From; float min and
// max order -0 below +0, compared as integer keys so that neither NaN nor
// subnormals meet a hardware comparison, and give the greatest NaN bits
// (as an unsigned integer) among the NaNs an element meets, which no order
// of the updates changes. Sub is sum with the
// update negated, which is exact (IEEE 754 defines x - y as x + (-y)).
//
// Variant macros:
//   DTYPE     the data type, DT_BOOL ... DT_F64. Without INT64 (the 32-bit
//             baseline, common.glsl) 8-byte elements are uvec2 pairs
//             (low, high) and their arithmetic is done on words: add with
//             carry, the wrapping 64x64 multiply from umulExtended, signed
//             and unsigned compares. Such elements have no atomics: they
//             fold in order (reduce.comp), and the baseline's float64
//             variants are generated for min and max only (float64 sum,
//             sub, prod and mean need shaderInt64 and shaderFloat64).
//   ATOMICS_NATIVE  1: use the device's atomic add, min and max where they
//             give the reduction exactly (32-bit integers; 64-bit integers;
//             float32 and float64 add with GL_EXT_shader_atomic_float;
//             float32 min and max on integer atomics); 2: float32 min and
//             max on integer atomics alone (no float atomics needed);
//             0: compare-and-swap loops for everything.
// Specialization constants:
//   SPEC_RED         RED: the reduction (RED_SUM ... RED_MEAN)
//   SPEC_PRIV_WORDS  PRIV_WORDS: workgroup memory for FLAG_PRIVATE, in
//                    32-bit words

// DT_BOOL ... DT_F64 and NEUTRAL_BITS come from abi_gen.glsl.

#ifndef ATOMICS_NATIVE
#define ATOMICS_NATIVE 0
#endif

#if DTYPE == DT_BOOL || DTYPE == DT_I8 || DTYPE == DT_U8
#define ELEM_BYTES 1
#elif DTYPE == DT_I16 || DTYPE == DT_U16 || DTYPE == DT_F16 || DTYPE == DT_BF16
#define ELEM_BYTES 2
#elif DTYPE == DT_I32 || DTYPE == DT_U32 || DTYPE == DT_F32
#define ELEM_BYTES 4
#elif DTYPE == DT_I64 || DTYPE == DT_U64 || DTYPE == DT_F64
#define ELEM_BYTES 8
#else
#error reduce.glsl: unknown DTYPE
#endif

#define IS_FLOAT (DTYPE >= DT_F16)
#define IS_INT (DTYPE >= DT_I8 && DTYPE <= DT_U64)
#define IS_SIGNED (DTYPE == DT_I8 || DTYPE == DT_I16 || DTYPE == DT_I32 || DTYPE == DT_I64)
#define ELEM_BITS (ELEM_BYTES * 8)
// MEAN_ACC64: the mean of integers of 32 bits or less sums exactly in 64
// bits, in a tensor of its own (T_ACC); other means sum in the output.
#define MEAN_ACC64 (IS_INT && ELEM_BYTES <= 4)

#if ELEM_BYTES == 8 && INT64
#extension GL_EXT_shader_atomic_int64 : require
#define E_T uint64_t
#define E_ONE 1ul
#define E_ZERO 0ul
#define E_MASK 0xFFFFFFFFFFFFFFFFul
#define E_SIGN 0x8000000000000000ul
#elif ELEM_BYTES == 8
#define E_PAIRS 1
#define E_T uvec2
#define E_ONE uvec2(1u, 0u)
#define E_ZERO uvec2(0u)
#define E_MASK uvec2(0xFFFFFFFFu)
#define E_SIGN uvec2(0u, 0x80000000u)
#else
#define E_T uint
#define E_ONE 1u
#define E_ZERO 0u
#define E_MASK ((ELEM_BITS == 32) ? 0xFFFFFFFFu : ((1u << ELEM_BITS) - 1u))
#define E_SIGN (1u << (ELEM_BITS - 1))
#endif

#if ATOMICS_NATIVE == 1 && DTYPE == DT_F32
#extension GL_EXT_shader_atomic_float : require
#endif
#if ATOMICS_NATIVE == 1 && DTYPE == DT_F64
#extension GL_EXT_shader_atomic_float : require
#endif

layout(constant_id = SPEC_RED) const uint RED = RED_SUM;
layout(constant_id = SPEC_PRIV_WORDS) const uint PRIV_WORDS = 1u;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer WordI {
	int w;
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer WordF {
	float f;
};
#if INT64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Word64 {
	uint64_t v;
};
layout(buffer_reference, std430, buffer_reference_align = 8) buffer WordI64 {
	int64_t v;
};
layout(buffer_reference, std430, buffer_reference_align = 8) buffer WordD {
	double d;
};
#endif

// Element arithmetic: the operators, or on 8-byte pairs (E_PAIRS) the
// word-wise forms.
#ifdef E_PAIRS
E_T eAdd(E_T a, E_T b) {
	return add64(a, b);
}

// eMul returns the low 64 bits of a * b.
E_T eMul(E_T a, E_T b) {
	uint hi, lo;
	umulExtended(a.x, b.x, hi, lo);
	return uvec2(lo, hi + a.x * b.y + a.y * b.x);
}

E_T eNeg(E_T a) {
	return add64(~a, E_ONE);
}

bool eLessU(E_T a, E_T b) {
	return a.y != b.y ? a.y < b.y : a.x < b.x;
}

// ePair returns the element of words lo and hi.
E_T ePair(uint lo, uint hi) {
	return uvec2(lo, hi);
}
#else
E_T eAdd(E_T a, E_T b) {
	return a + b;
}

E_T eMul(E_T a, E_T b) {
	return a * b;
}

E_T eNeg(E_T a) {
	return E_ZERO - a;
}

bool eLessU(E_T a, E_T b) {
	return a < b;
}

#if ELEM_BYTES == 8
E_T ePair(uint lo, uint hi) {
	return packUint2x32(uvec2(lo, hi));
}
#endif
#endif

#if !INT64
// divStep divides the 64-bit number (r, w) by c, r < c, and returns the
// 32-bit quotient, leaving the remainder in r: binary long division, 32
// steps, with the bit shifted out of r kept (c may pass 2^31).
uint divStep(inout uint r, uint w, uint c) {
	uint q = 0u;
	for (int b = 31; b >= 0; b--) {
		bool carry = (r >> 31) != 0u;
		r = (r << 1) | ((w >> uint(b)) & 1u);
		q <<= 1;
		if (carry || r >= c) {
			r -= c;
			q |= 1u;
		}
	}
	return q;
}

// udiv64 returns n / c (c > 0) and the remainder in r.
uvec2 udiv64(uvec2 n, uint c, out uint r) {
	r = 0u;
	uint hi = divStep(r, n.y, c);
	uint lo = divStep(r, n.x, c);
	return uvec2(lo, hi);
}

// shl64 and shr64 shift pairs by 0 <= k < 64 bits.
uvec2 shl64(uvec2 x, int k) {
	if (k == 0) {
		return x;
	}
	if (k >= 32) {
		return uvec2(0u, x.x << uint(k - 32));
	}
	return uvec2(x.x << uint(k), (x.y << uint(k)) | (x.x >> uint(32 - k)));
}

uvec2 shr64(uvec2 x, int k) {
	if (k == 0) {
		return x;
	}
	if (k >= 32) {
		return uvec2(x.y >> uint(k - 32), 0u);
	}
	return uvec2((x.x >> uint(k)) | (x.y << uint(32 - k)), x.y >> uint(k));
}

bool lt64(uvec2 a, uvec2 b) {
	return a.y != b.y ? a.y < b.y : a.x < b.x;
}

uint bitLenPair(uvec2 x) {
	return x.y != 0u ? uint(findMSB(x.y)) + 33u : uint(findMSB(x.x) + 1);
}
#endif

// --- Float formats -------------------------------------------------------

#if DTYPE == DT_F16
// widen: float16 bits to float32 bits, exactly (subnormals become normal).
uint widen(uint h) {
	uint sign = (h & 0x8000u) << 16;
	uint exp = (h >> 10) & 0x1Fu;
	uint frac = h & 0x3FFu;
	if (exp == 0x1Fu) {
		return sign | 0x7F800000u | (frac << 13) | (frac != 0u ? 0x400000u : 0u);
	}
	if (exp == 0u) {
		if (frac == 0u) {
			return sign;
		}
		int msb = findMSB(frac); // value = frac * 2^-24 = 1.f * 2^(msb-24)
		return sign | (uint(msb + 103) << 23) | ((frac << (23 - msb)) & 0x7FFFFFu);
	}
	return sign | ((exp + 112u) << 23) | (frac << 13);
}

// narrow: float32 bits to the nearest float16, ties to even; NaN stays NaN.
// It mirrors github.com/x448/float16's f32bitsToF16bits step for step.
uint narrow(uint u) {
	uint sign = u & 0x80000000u;
	uint exp = u & 0x7F800000u;
	uint coef = u & 0x007FFFFFu;
	if (exp == 0x7F800000u) {
		uint nanBit = coef != 0u ? 0x200u : 0u;
		return (sign >> 16) | 0x7C00u | nanBit | (coef >> 13);
	}
	uint halfSign = sign >> 16;
	int halfExp = int(exp >> 23) - 127 + 15;
	if (halfExp >= 0x1F) {
		return halfSign | 0x7C00u;
	}
	if (halfExp <= 0) {
		if (14 - halfExp > 24) {
			return halfSign;
		}
		uint c = coef | 0x00800000u;
		uint halfCoef = c >> uint(14 - halfExp);
		uint roundBit = 1u << uint(13 - halfExp);
		if ((c & roundBit) != 0u && (c & (3u * roundBit - 1u)) != 0u) {
			halfCoef++;
		}
		return halfSign | halfCoef;
	}
	uint r = halfSign | (uint(halfExp) << 10) | (coef >> 13);
	if ((coef & 0x1000u) != 0u && (coef & 0x2FFFu) != 0u) {
		r++;
	}
	return r;
}
#elif DTYPE == DT_BF16
uint widen(uint h) {
	return h << 16;
}

// narrow mirrors tensor.BF16From: NaN stays a quiet NaN, else round to
// nearest even.
uint narrow(uint u) {
	if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
		return (u >> 16) | 0x40u;
	}
	return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}
#endif

#if IS_FLOAT
// The format's precision (significand bits), smallest normal exponent and
// bias, for divRound.
#if DTYPE == DT_F16
#define F_P 11
#define F_EMIN (-14)
#define F_BIAS 15
#elif DTYPE == DT_BF16
#define F_P 8
#define F_EMIN (-126)
#define F_BIAS 127
#elif DTYPE == DT_F32
#define F_P 24
#define F_EMIN (-126)
#define F_BIAS 127
#else
#define F_P 53
#define F_EMIN (-1022)
#define F_BIAS 1023
#endif
#ifdef E_PAIRS
#define F_INF uvec2(0u, 0x7FF00000u)
#define F_FRAC uvec2(0xFFFFFFFFu, 0xFFFFFu)
#define F_QUIET uvec2(0u, 0x80000u)
#else
#define F_INF (E_SIGN - (E_ONE << (F_P - 1)))  // +inf: all exponent bits
#define F_FRAC ((E_ONE << (F_P - 1)) - E_ONE)
#define F_QUIET (E_ONE << (F_P - 2)) // the quiet bit of a NaN
#endif

bool isNaN(E_T x) {
	return eLessU(F_INF, x & ~E_SIGN);
}

// orderKey maps float bits onto unsigned integers in the order of their
// values, -0 just below +0 (NaN excluded).
E_T orderKey(E_T x) {
	return (x & E_SIGN) != E_ZERO ? (~x & E_MASK) : (x | E_SIGN);
}

#if INT64
uint bitLen64(uint64_t x) {
	uint hi = uint(x >> 32);
	return hi != 0u ? uint(findMSB(hi)) + 33u : uint(findMSB(uint(x)) + 1);
}
#endif

// divRound returns x / c rounded to the nearest value of the format, ties
// to even, for c >= 1: the mean's division, correctly rounded on every
// device (GLSL division is not) and with subnormal results exact. The CPU
// reference divides in float64, which rounds the same way (for float16,
// bfloat16 and float32 via float32: each rounding has more than twice the
// precision of the next, so the double rounding is innocuous).
#if INT64
E_T divRound(E_T x, uint c) {
	E_T sign = x & E_SIGN;
	E_T mag = x & ~E_SIGN;
	if (mag >= F_INF || mag == E_ZERO || c == 1u) {
		return x; // inf, NaN, zeros and x / 1 are themselves
	}
	uint ef = uint(mag >> (F_P - 1));
	uint64_t m = uint64_t(mag & F_FRAC);
	int e = F_EMIN - (F_P - 1);
	if (ef != 0u) {
		m |= uint64_t(1) << (F_P - 1);
		e = int(ef) - F_BIAS - (F_P - 1);
	}
	// x = m * 2^e. N = m * 2^K has 63 + bitlen(c) bits, so that the
	// quotient Q = N / c has 63 or 64: far more than the format keeps.
	uint cb = uint(findMSB(c)) + 1u;
	int K = 63 + int(cb) - int(bitLen64(m));
	uint64_t lo, hi;
	if (K < 64) {
		lo = m << K;
		hi = K == 0 ? 0ul : m >> (64 - K);
	} else {
		lo = 0ul;
		hi = m << (K - 64);
	}
	// Long division of the 96-bit N by c, one 32-bit word at a time.
	uint w[3] = uint[3](uint(hi), uint(lo >> 32), uint(lo));
	uint64_t r = 0ul;
	uint q[3];
	for (int i = 0; i < 3; i++) {
		uint64_t cur = (r << 32) | uint64_t(w[i]);
		uint64_t qq = cur / uint64_t(c);
		q[i] = uint(qq);
		r = cur - qq * uint64_t(c);
	}
	uint64_t Q = (uint64_t(q[1]) << 32) | uint64_t(q[2]);
	bool sticky = r != 0ul;
	// The value is (Q + sticky bits) * 2^(e-K); E is its exponent.
	int L = int(bitLen64(Q));
	int E = e - K + L - 1;
	int s = E >= F_EMIN ? L - F_P : (F_EMIN - F_P + 1) - (e - K);
	uint64_t kept;
	bool up;
	if (s > 64) {
		return sign; // below half the smallest subnormal
	}
	if (s == 64) {
		kept = 0ul;
		up = Q > (1ul << 63) || (Q == (1ul << 63) && sticky);
	} else {
		kept = Q >> s;
		uint64_t rem = Q & ((1ul << s) - 1ul);
		uint64_t halfQ = 1ul << (s - 1);
		up = rem > halfQ || (rem == halfQ && (sticky || (kept & 1ul) != 0ul));
	}
	kept += up ? 1ul : 0ul;
	if (E < F_EMIN) {
		return sign | E_T(kept); // a subnormal, or the smallest normal
	}
	if (kept == (uint64_t(1) << F_P)) {
		kept >>= 1;
		E++;
	}
	return sign | (E_T(E + F_BIAS) << (F_P - 1)) | (E_T(kept) & F_FRAC);
}
#elif !defined(E_PAIRS)
// divRound without INT64, for the formats of 32 bits or less: the same
// steps on (low, high) pairs, the 96-bit long division by divStep.
E_T divRound(E_T x, uint c) {
	E_T sign = x & E_SIGN;
	E_T mag = x & ~E_SIGN;
	if (mag >= F_INF || mag == E_ZERO || c == 1u) {
		return x;
	}
	uint ef = mag >> (F_P - 1);
	uint m = mag & F_FRAC;
	int e = F_EMIN - (F_P - 1);
	if (ef != 0u) {
		m |= 1u << (F_P - 1);
		e = int(ef) - F_BIAS - (F_P - 1);
	}
	uint cb = uint(findMSB(c)) + 1u;
	int K = 63 + int(cb) - (findMSB(m) + 1);
	uvec2 lo, hi;
	if (K < 64) {
		lo = shl64(uvec2(m, 0u), K);
		hi = K == 0 ? uvec2(0u) : shr64(uvec2(m, 0u), 64 - K);
	} else {
		lo = uvec2(0u);
		hi = shl64(uvec2(m, 0u), K - 64);
	}
	uint r = 0u;
	divStep(r, hi.x, c);
	uint q1 = divStep(r, lo.y, c);
	uint q2 = divStep(r, lo.x, c);
	uvec2 Q = uvec2(q2, q1);
	bool sticky = r != 0u;
	int L = int(bitLenPair(Q));
	int E = e - K + L - 1;
	int s = E >= F_EMIN ? L - F_P : (F_EMIN - F_P + 1) - (e - K);
	uvec2 kept;
	bool up;
	if (s > 64) {
		return sign;
	}
	const uvec2 top = uvec2(0u, 0x80000000u);
	if (s == 64) {
		kept = uvec2(0u);
		up = lt64(top, Q) || (Q == top && sticky);
	} else {
		kept = shr64(Q, s);
		uvec2 mask = s >= 32 ? uvec2(0xFFFFFFFFu, (1u << uint(s - 32)) - 1u) : uvec2((1u << uint(s)) - 1u, 0u);
		uvec2 rem = Q & mask;
		uvec2 halfQ = shl64(uvec2(1u, 0u), s - 1);
		up = lt64(halfQ, rem) || (rem == halfQ && (sticky || (kept.x & 1u) != 0u));
	}
	kept = add64(kept, uvec2(up ? 1u : 0u, 0u));
	if (E < F_EMIN) {
		return sign | kept.x;
	}
	if (kept == uvec2(1u << F_P, 0u)) {
		kept = shr64(kept, 1);
		E++;
	}
	return sign | (uint(E + F_BIAS) << (F_P - 1)) | (kept.x & F_FRAC);
}
#endif
#endif

// --- Float steps in integer arithmetic -------------------------------------
//
// A device may flush subnormal operands and results of float arithmetic to
// zero unless it promises to keep them (shaderDenormPreserveFloat32 and
// ...Float64; vk then declares DenormPreserve in every module). Where it
// does not (FLAG_SOFT_FLOATS), a step with a subnormal operand, or whose
// result is below twice the smallest normal (where a flushed result, or
// one flushed before rounding, lands), is computed again here in integer
// arithmetic, correctly rounded, ties to even, as the CPU reference's
// IEEE arithmetic. Other steps keep the device's result, which flushing
// cannot have touched. FLAG_SOFT_ALWAYS takes every step through here
// (knobs.SoftFloats, so that tests cover the whole range). Float16 needs
// none of it: its steps are in float32, where no float16 value or result
// is subnormal. Bfloat16 steps are float32 steps.

#if DTYPE == DT_F32 || DTYPE == DT_BF16
#define SF_SOFT 1
#define SF_T uint
#define SF_BITS 32
#define SF_P 24
#define SF_EMAX 255
#define SF_BIAS 127
#define SF_ONE 1u
#define SF_ZERO 0u
#elif DTYPE == DT_F64 && INT64
#define SF_SOFT 1
#define SF_T uint64_t
#define SF_BITS 64
#define SF_P 53
#define SF_EMAX 2047
#define SF_BIAS 1023
#define SF_ONE 1ul
#define SF_ZERO 0ul
#endif

#ifdef SF_SOFT
#define SF_SIGN (SF_ONE << (SF_BITS - 1))
#define SF_FRAC ((SF_ONE << (SF_P - 1)) - SF_ONE)
// A working significand keeps SF_GUARD bits below the format's last bit
// and its leading (hidden) bit at SF_TOP, with one bit above for a carry.
#define SF_GUARD (SF_BITS - 2 - SF_P)
#define SF_TOP (SF_P - 1 + SF_GUARD)

// sfExp returns the biased exponent field of x.
int sfExp(SF_T x) {
	return int(uint(x >> (SF_P - 1))) & SF_EMAX;
}

// sfLen returns the bit length of x.
int sfLen(SF_T x) {
#if SF_BITS == 64
	return int(bitLen64(x));
#else
	return findMSB(x) + 1;
#endif
}

// sfShr shifts m right by s >= 0 bits, keeping in bit 0 whether any bit
// shifted out was set (the sticky bit).
SF_T sfShr(SF_T m, int s) {
	if (s <= 0) {
		return m;
	}
	if (s >= SF_BITS) {
		return m != SF_ZERO ? SF_ONE : SF_ZERO;
	}
	SF_T q = m >> s;
	return (q << s) != m ? (q | SF_ONE) : q;
}

// sfPack rounds the working significand m (its leading bit at SF_TOP, or
// below with e == 1 for a subnormal) to the format, ties to even, and
// returns the float of sign s and biased exponent e >= 1. The rounded
// significand still holds its leading bit, so adding it onto the field
// e - 1 gives the right bits for normals, subnormals, a carry into the
// next binade, the smallest normal and overflow to infinity alike.
SF_T sfPack(SF_T s, int e, SF_T m) {
	SF_T halfway = SF_ONE << (SF_GUARD - 1);
	SF_T rem = m & ((SF_ONE << SF_GUARD) - SF_ONE);
	m >>= SF_GUARD;
	if (rem > halfway || (rem == halfway && (m & SF_ONE) != SF_ZERO)) {
		m += SF_ONE;
	}
	if (e >= SF_EMAX) {
		return s | (SF_T(uint(SF_EMAX)) << (SF_P - 1));
	}
	return s | ((SF_T(uint(e - 1)) << (SF_P - 1)) + m);
}

// sfParts splits the finite x into its biased exponent (1 for a
// subnormal) and its significand with the leading bit (none for a
// subnormal) at SF_P - 1.
void sfParts(SF_T x, out int e, out SF_T m) {
	e = sfExp(x);
	m = x & SF_FRAC;
	if (e == 0) {
		e = 1;
	} else {
		m |= SF_ONE << (SF_P - 1);
	}
}

// softAdd returns a + b for finite a and b.
SF_T softAdd(SF_T a, SF_T b) {
	if ((a & ~SF_SIGN) < (b & ~SF_SIGN)) {
		SF_T t = a;
		a = b;
		b = t;
	}
	int ea, eb;
	SF_T ma, mb;
	sfParts(a, ea, ma);
	sfParts(b, eb, mb);
	ma <<= SF_GUARD;
	mb = sfShr(mb << SF_GUARD, ea - eb);
	bool same = ((a ^ b) & SF_SIGN) == SF_ZERO;
	SF_T m = same ? ma + mb : ma - mb;
	if (m == SF_ZERO) {
		// An exact zero: x + (-x) is +0, -0 + -0 is -0.
		return same ? (a & SF_SIGN) : SF_ZERO;
	}
	int e = ea;
	if (m >= (SF_ONE << (SF_TOP + 1))) {
		m = sfShr(m, 1);
		e++;
	} else {
		// Normalise, but not below the subnormals' exponent.
		int k = min(SF_TOP + 1 - sfLen(m), e - 1);
		if (k > 0) {
			m <<= k;
			e -= k;
		}
	}
	return sfPack(a & SF_SIGN, e, m);
}

// sfMulWide returns the double-width product of a and b in hi and lo.
void sfMulWide(SF_T a, SF_T b, out SF_T hi, out SF_T lo) {
#if SF_BITS == 64
	uint a0 = uint(a), a1 = uint(a >> 32), b0 = uint(b), b1 = uint(b >> 32);
	uint h00, l00, h01, l01, h10, l10, h11, l11;
	umulExtended(a0, b0, h00, l00);
	umulExtended(a0, b1, h01, l01);
	umulExtended(a1, b0, h10, l10);
	umulExtended(a1, b1, h11, l11);
	uint64_t mid = uint64_t(h00) + uint64_t(l01) + uint64_t(l10);
	lo = (mid << 32) | uint64_t(l00);
	hi = packUint2x32(uvec2(l11, h11)) + uint64_t(h01) + uint64_t(h10) + (mid >> 32);
#else
	umulExtended(a, b, hi, lo);
#endif
}

// softMul returns a * b for finite a and b.
SF_T softMul(SF_T a, SF_T b) {
	SF_T s = (a ^ b) & SF_SIGN;
	int ea, eb;
	SF_T ma, mb;
	sfParts(a, ea, ma);
	sfParts(b, eb, mb);
	if (ma == SF_ZERO || mb == SF_ZERO) {
		return s;
	}
	// Subnormal operands: leading bit to SF_P - 1, exponent below 1.
	int ka = SF_P - sfLen(ma), kb = SF_P - sfLen(mb);
	ma <<= ka;
	mb <<= kb;
	ea -= ka;
	eb -= kb;
	// The product has 2*SF_P - 1 or 2*SF_P bits; keep SF_TOP + 2 of them
	// with the rest as the sticky bit.
	const int sh = 2 * SF_P + 1 - SF_BITS;
	SF_T hi, lo;
	sfMulWide(ma, mb, hi, lo);
	SF_T m = (hi << (SF_BITS - sh)) | (lo >> sh);
	if ((lo << (SF_BITS - sh)) != SF_ZERO) {
		m |= SF_ONE;
	}
	int e = ea + eb - SF_BIAS;
	if (m >= (SF_ONE << (SF_TOP + 1))) {
		m = sfShr(m, 1);
		e++;
	}
	if (e < 1) {
		m = sfShr(m, 1 - e);
		e = 1;
	}
	return sfPack(s, e, m);
}

// softStep returns r, the device's sum (or, for prod, product) of a and b,
// neither of them NaN, or that step computed again in integer arithmetic
// where the device may have flushed a subnormal (see above).
SF_T softStep(SF_T a, SF_T b, SF_T r) {
	if ((FLAGS & (FLAG_SOFT_FLOATS | FLAG_SOFT_ALWAYS)) == 0u) {
		return r;
	}
	int ea = sfExp(a), eb = sfExp(b);
	bool subA = ea == 0 && (a & ~SF_SIGN) != SF_ZERO, subB = eb == 0 && (b & ~SF_SIGN) != SF_ZERO;
	if (ea == SF_EMAX || eb == SF_EMAX) {
		// An infinity: the sum is the device's, but a device that takes a
		// subnormal factor for zero makes inf * x a NaN.
		if (RED == RED_PROD && (subA || subB)) {
			return ((a ^ b) & SF_SIGN) | (SF_T(uint(SF_EMAX)) << (SF_P - 1));
		}
		return r;
	}
	bool tiny = subA || subB || sfExp(r) <= 1;
	if (!tiny && (FLAGS & FLAG_SOFT_ALWAYS) == 0u) {
		return r;
	}
	return RED == RED_PROD ? softMul(a, b) : softAdd(a, b);
}
#endif

// --- Steps ---------------------------------------------------------------

#if IS_INT && IS_SIGNED
// sext returns the element's value as a signed 64-bit integer.
idx_t sext(E_T x) {
#if ELEM_BYTES == 8
	return idx_t(x);
#else
	int v = int(x << (32 - ELEM_BITS)) >> (32 - ELEM_BITS);
	// Built from words: some compilers miscompile int64_t(int).
	return makeIdx(uint(v), uint(v >> 31));
#endif
}
#endif

#if IS_INT
// value64 returns the element's value widened to 64 bits (zero- or
// sign-extended).
idx_t value64(E_T x) {
#if IS_SIGNED
	return sext(x);
#elif INT64 || ELEM_BYTES == 8
	return idx_t(x);
#else
	return makeIdx(x, 0u);
#endif
}

bool intLess(E_T a, E_T b) {
#if IS_SIGNED
	return sLess(sext(a), sext(b));
#else
	return eLessU(a, b);
#endif
}
#endif

// negate returns -x in the type (two's complement, or the sign flipped),
// as sub folds its updates; a NaN stays as it is, since x - NaN is that
// NaN (quieted) on the CPU, not its negation.
E_T negate(E_T x) {
#if IS_FLOAT
	return isNaN(x) ? x : x ^ E_SIGN;
#else
	return eNeg(x) & E_MASK;
#endif
}

// combine is one step of the reduction: the element a with the update b
// folded in. Sub arrives here as sum (its update negated); mean as sum
// (the division comes later).
E_T combine(E_T a, E_T b) {
#if DTYPE == DT_BOOL
	bool x = a != 0u, y = b != 0u;
	if (RED == RED_SUB) {
		return x != y ? 1u : 0u;
	}
	if (RED == RED_PROD || RED == RED_MIN) {
		return x && y ? 1u : 0u;
	}
	return x || y ? 1u : 0u;
#elif IS_INT
	if (RED == RED_PROD) {
		return eMul(a, b) & E_MASK;
	}
	if (RED == RED_MIN) {
		return intLess(b, a) ? b : a;
	}
	if (RED == RED_MAX) {
		return intLess(a, b) ? b : a;
	}
	return eAdd(a, b) & E_MASK;
#else
	if (RED == RED_MIN || RED == RED_MAX) {
		// A NaN wins over every number; of two NaNs, the one whose bits
		// are greater as an unsigned integer (specs/README.md, "Floats").
		// Both rules are commutative and associative, so every order of
		// the steps, atomics' included, gives the same bits.
		bool na = isNaN(a), nb = isNaN(b);
		if (na || nb) {
			return !na || (nb && eLessU(a, b)) ? b : a;
		}
		E_T ka = orderKey(a), kb = orderKey(b);
		if (RED == RED_MIN) {
			return eLessU(kb, ka) ? b : a;
		}
		return eLessU(ka, kb) ? b : a;
	}
#ifdef E_PAIRS
	// The baseline's float64 variants take min and max only (see the
	// variant macros above): no other reduction reaches here.
	return a;
#else
	// NaN operands propagate as the CPU's (x86's) arithmetic does, which
	// devices need not: the element's NaN first, then the update's, each
	// quieted; a NaN the step creates (inf - inf, 0 * inf) is the
	// negative quiet NaN with no payload.
	if (isNaN(a)) {
		return a | F_QUIET;
	}
	if (isNaN(b)) {
		return b | F_QUIET;
	}
	E_T r;
#if DTYPE == DT_F64
	precise double d = RED == RED_PROD ? uint64BitsToDouble(a) * uint64BitsToDouble(b) : uint64BitsToDouble(a) + uint64BitsToDouble(b);
	r = softStep(a, b, doubleBitsToUint64(d));
#elif DTYPE == DT_F32
	precise float f = RED == RED_PROD ? uintBitsToFloat(a) * uintBitsToFloat(b) : uintBitsToFloat(a) + uintBitsToFloat(b);
	r = softStep(a, b, floatBitsToUint(f));
#else
	uint wa = widen(a), wb = widen(b);
	precise float x = uintBitsToFloat(wa), y = uintBitsToFloat(wb);
	precise float f = RED == RED_PROD ? x * y : x + y;
#if DTYPE == DT_BF16
	r = narrow(softStep(wa, wb, floatBitsToUint(f)));
#else
	r = narrow(floatBitsToUint(f));
#endif
#endif
	return isNaN(r) ? (F_INF | E_SIGN | F_QUIET) : r;
#endif
#endif
}

// initNeutral is the value an element that receives updates starts from
// when use_init_val is false: ops.Reduction.NeutralBits, generated into
// abi_gen.glsl (sum 0, prod 1, min +inf or the type's maximum, max -inf or
// the type's minimum; bool false for OR, true for AND).
E_T initNeutral() {
	return E_T(NEUTRAL_BITS(RED));
}

// identity is a value that every step leaves the other operand of, bit for
// bit: initNeutral, except that the float sum's is -0 (-0 + x is x for
// every x, +0 included; +0 + -0 is +0). Workgroup partial results start
// from it.
E_T identity() {
#if IS_FLOAT
	if (RED == RED_SUM || RED == RED_SUB) {
		return E_SIGN;
	}
#endif
	return initNeutral();
}

// --- Elements in memory --------------------------------------------------

off_t elemOffset(pos_t e) {
	return offsetOf(count_t(e), uint(ELEM_BYTES));
}

// loadElem returns element e of tensor t (zero-extended bits).
E_T loadElem(uint t, pos_t e) {
	off_t o = elemOffset(e);
#ifdef E_PAIRS
	return Word2(addressOf(t, o)).v;
#elif ELEM_BYTES == 8
	return Word64(addressOf(t, o)).v;
#elif ELEM_BYTES == 4
	return loadWord(t, o);
#else
	return (loadWord(t, offAlign4(o)) >> ((offLow(o) & 3u) * 8u)) & E_MASK;
#endif
}

// storeElem writes element e of the output. Other invocations may be
// writing the other bytes of a 1- or 2-byte element's word at the same
// time, so that takes two atomics: clear the bits v does not set, then set
// those it does.
void storeElem(pos_t e, E_T v) {
	off_t o = elemOffset(e);
#ifdef E_PAIRS
	Word2(addressOf(T_OUT, o)).v = v;
#elif ELEM_BYTES == 8
	Word64(addressOf(T_OUT, o)).v = v;
#elif ELEM_BYTES == 4
	storeWord(T_OUT, o, v);
#else
	uint bit = (offLow(o) & 3u) * 8u;
	addr_t a = addressOf(T_OUT, offAlign4(o));
	uint bits = v << bit;
	atomicAnd(Word(a).w, bits | ~(E_MASK << bit));
	atomicOr(Word(a).w, bits);
#endif
}

// nativeOp reports whether the device's atomic instruction computes the
// reduction step exactly: add on integers of 32 and 64 bits (wrapping) and,
// with ATOMICS_NATIVE variants for float32 and float64, on floats (one
// correctly rounded addition per update, in some order); min and max on
// integers. Float min and max never are: the atomic float min/max of
// GL_EXT_shader_atomic_float2 leaves NaN and signed zeros unspecified, and
// lavapipe's returns min(1, NaN) = 1 and min(+0, -0) = +0.
bool nativeOp() {
#if !ATOMICS_NATIVE || ELEM_BYTES < 4 || DTYPE == DT_BOOL
	return false;
#elif ATOMICS_NATIVE == 2
	return RED == RED_MIN || RED == RED_MAX;
#elif IS_INT || DTYPE == DT_F32
	return RED == RED_SUM || RED == RED_SUB || RED == RED_MEAN || RED == RED_MIN || RED == RED_MAX;
#else
	return RED == RED_SUM || RED == RED_SUB || RED == RED_MEAN;
#endif
}

#if ATOMICS_NATIVE && DTYPE == DT_F32
// restoreNaN puts back the NaN v that an atomic displaced though v beats
// what displaced it. A negative v: atomicMax on uint, which displaces
// only what v beats. A positive v: atomicMax on int, which may displace a
// negative NaN in turn (it returns it): that one goes back with atomicMax
// on uint, and the chain ends there.
void restoreNaN(addr_t a, uint v) {
	if ((v & E_SIGN) != 0u) {
		atomicMax(Word(a).w, v);
		return;
	}
	uint prev = uint(atomicMax(WordI(a).w, int(v)));
	if (isNaN(prev) && (prev & E_SIGN) != 0u) {
		atomicMax(Word(a).w, prev);
	}
}

// Float32 min and max with 32-bit integer atomics, which every device has,
// in place of a compare-and-swap loop (whose retries serialise the
// invocations that meet on one element: 250 times slower than one atomic
// per update on a discrete GPU with 16M updates into 64 elements). For a
// non-negative x (sign bit clear) the integer order of the bits is the
// float order, and any negative float is below it as a signed integer;
// for a negative x the unsigned order of the bits is the reverse of the
// float order, and any non-negative float is below it as an unsigned
// integer. So max is atomicMax on int for a number x >= +0 and atomicMin
// on uint for x <= -0; min the mirror. -0 orders below +0, as cpuref's.
//
// NaN: the element ends as the NaN of greatest unsigned bits among those
// it meets (combine's rule), whatever the order. A negative NaN x takes
// atomicMax on uint: its bits are above every number's and every positive
// NaN's, so it displaces exactly what it beats. A positive NaN x takes
// atomicMax on int: above every number and smaller positive NaN, but it
// also displaces a negative NaN, which beats it; and a number can displace
// a NaN (under max any number a negative NaN, under min any number a
// positive one). Each atomic returns what it replaced, and the
// invocation whose atomic displaced a NaN that beats its x puts it back
// (restoreNaN). Let W be the winning NaN: once W is in the element, any
// atomic that displaces it returns W and its invocation restores it, and
// a restore of W leaves W (a negative W is the greatest unsigned value
// there can be; a positive W, with no negative NaN about, the greatest
// signed one); so the element holds W or a restore of W is pending, and
// when every invocation is done it holds W. gpu/DESIGN.md has the
// argument in full.
void minMaxF32(addr_t a, uint x) {
	// An update the element already beats costs one load, as in the loop:
	// every value the element ever holds is one of its operands, so what
	// a load sees beating x, the final result beats too.
	uint cur = Word(a).w;
	if (combine(cur, x) == cur) {
		return;
	}
	bool neg = (x & E_SIGN) != 0u;
	uint old;
	if (isNaN(x)) {
		old = neg ? atomicMax(Word(a).w, x) : uint(atomicMax(WordI(a).w, int(x)));
	} else if (RED == RED_MAX) {
		old = neg ? atomicMin(Word(a).w, x) : uint(atomicMax(WordI(a).w, int(x)));
	} else {
		old = neg ? atomicMax(Word(a).w, x) : uint(atomicMin(WordI(a).w, int(x)));
	}
	if (isNaN(old) && old != x && combine(old, x) == old) {
		restoreNaN(a, old);
	}
}

// keyOf and bitsOfKey map float32 bits to and from unsigned keys, a
// bijection per reduction, for min and max in workgroup memory (unsigned
// atomics on a uint array): atomicMax on max's keys and atomicMin on
// min's give combine's result. Numbers keep orderKey's order, which puts
// them in [0x007FFFFF, 0xFF800000] (-inf to +inf); NaNs go beyond the
// winning end, ranked by their unsigned bits: r, in [0, 2^24 - 3], is
// 0 for 0x7F800001 up to 2^23 - 2 for 0x7FFFFFFF, then 2^23 - 1 for
// 0xFF800001 up to 2^24 - 3 for 0xFFFFFFFF. Max: numbers at orderKey -
// 0x7FFFFF (-inf 0, +inf 0xFF000001), NaNs at 0xFF000002 + r; min:
// numbers at orderKey + 0x7FFFFF (-inf 0x00FFFFFE, +inf 0xFFFFFFFF),
// NaNs at 2^24 - 3 - r. Every value, the identities -inf (max) and +inf
// (min) included, has a key of its own.
#define NAN_RANKS 0xFFFFFEu // 2^24 - 2 NaN patterns
uint nanRank(uint x) {
	return (x & ~E_SIGN) - 0x7F800001u + ((x & E_SIGN) != 0u ? 0x7FFFFFu : 0u);
}

uint nanOfRank(uint r) {
	return r < 0x7FFFFFu ? 0x7F800001u + r : 0xFF000002u + r;
}

uint keyOf(uint x) {
	if (RED == RED_MAX) {
		return isNaN(x) ? 0xFF000002u + nanRank(x) : orderKey(x) - 0x7FFFFFu;
	}
	return isNaN(x) ? (NAN_RANKS - 1u) - nanRank(x) : orderKey(x) + 0x7FFFFFu;
}

uint bitsOfKey(uint k) {
	if (RED == RED_MAX) {
		if (k >= 0xFF000002u) {
			return nanOfRank(k - 0xFF000002u);
		}
		k += 0x7FFFFFu;
	} else {
		if (k < NAN_RANKS) {
			return nanOfRank((NAN_RANKS - 1u) - k);
		}
		k -= 0x7FFFFFu;
	}
	return (k & E_SIGN) != 0u ? (k & ~E_SIGN) : ~k;
}
#endif

// atomicExact reports whether the device's atomic instruction may fold x
// in: always, but for float add with FLAG_EXACT_ATOMICS (GPUs, whose
// float atomics may flush subnormals even where the shader asks to keep
// them: NVIDIA's global float atomics do) only an update of magnitude at
// least 2^(SF_P+3-bias) (2^-100 for float32, 2^-967 for float64), NaN and
// infinities: with such an x no operand or result of the step is
// subnormal or below twice the smallest normal, save an element subnormal
// enough to leave x unchanged anyway, and a cancellation, which is
// exactly zero, so flushing changes nothing. Smaller updates take the
// compare-and-swap loop, whose step is combine.
bool atomicExact(E_T x) {
#if defined(SF_SOFT) && ATOMICS_NATIVE == 1
	if ((FLAGS & FLAG_EXACT_ATOMICS) != 0u && (RED == RED_SUM || RED == RED_SUB || RED == RED_MEAN)) {
		return sfExp(x) >= SF_P + 3;
	}
#endif
	return true;
}

// applyGlobal folds x into element e of the output atomically: one atomic
// instruction where nativeOp, else a compare-and-swap loop on the element
// (1- and 2-byte elements: on their 32-bit word). A loop whose step would
// not change the element stops without writing: min and max of values
// already beaten cost one load.
// countAtomic counts a global atomic on output element e in its word of
// T_COUNT (FLAG_COUNT_ATOMICS: bench --count-atomics); a plan without the
// flag compiles it away.
void countAtomic(pos_t e) {
	if ((FLAGS & FLAG_COUNT_ATOMICS) != 0u) {
		atomicAdd(Word(addressOf(T_COUNT, u32Offset(e))).w, 1u);
	}
}

#ifndef E_PAIRS
void applyGlobal(pos_t e, E_T x) {
	countAtomic(e);
	off_t o = elemOffset(e);
#if ELEM_BYTES < 4
	addr_t a = addressOf(T_OUT, offAlign4(o));
	uint bit = (offLow(o) & 3u) * 8u;
	uint old = Word(a).w;
	for (;;) {
		uint cur = (old >> bit) & E_MASK;
		uint nv = combine(cur, x);
		if (nv == cur) {
			return;
		}
		uint prev = atomicCompSwap(Word(a).w, old, (old & ~(E_MASK << bit)) | (nv << bit));
		if (prev == old) {
			return;
		}
		old = prev;
	}
#elif ELEM_BYTES == 4
	addr_t a = addressOf(T_OUT, o);
#if ATOMICS_NATIVE
	if (nativeOp() && atomicExact(x)) {
#if IS_FLOAT
		if (RED == RED_MIN || RED == RED_MAX) {
			minMaxF32(a, x);
		}
#if ATOMICS_NATIVE == 1
		else {
			atomicAdd(WordF(a).f, uintBitsToFloat(x));
		}
#endif
#elif IS_SIGNED
		if (RED == RED_MIN) {
			atomicMin(WordI(a).w, int(x));
		} else if (RED == RED_MAX) {
			atomicMax(WordI(a).w, int(x));
		} else {
			atomicAdd(Word(a).w, x);
		}
#else
		if (RED == RED_MIN) {
			atomicMin(Word(a).w, x);
		} else if (RED == RED_MAX) {
			atomicMax(Word(a).w, x);
		} else {
			atomicAdd(Word(a).w, x);
		}
#endif
		return;
	}
#endif
	uint old = Word(a).w;
	for (;;) {
		uint nv = combine(old, x);
		if (nv == old) {
			return;
		}
		uint prev = atomicCompSwap(Word(a).w, old, nv);
		if (prev == old) {
			return;
		}
		old = prev;
	}
#else
	uint64_t a = addressOf(T_OUT, o);
#if ATOMICS_NATIVE
	if (nativeOp() && atomicExact(x)) {
#if IS_FLOAT
		atomicAdd(WordD(a).d, uint64BitsToDouble(x));
#elif IS_SIGNED
		if (RED == RED_MIN) {
			atomicMin(WordI64(a).v, int64_t(x));
		} else if (RED == RED_MAX) {
			atomicMax(WordI64(a).v, int64_t(x));
		} else {
			atomicAdd(Word64(a).v, x);
		}
#else
		if (RED == RED_MIN) {
			atomicMin(Word64(a).v, x);
		} else if (RED == RED_MAX) {
			atomicMax(Word64(a).v, x);
		} else {
			atomicAdd(Word64(a).v, x);
		}
#endif
		return;
	}
#endif
	uint64_t old = Word64(a).v;
	for (;;) {
		uint64_t nv = combine(old, x);
		if (nv == old) {
			return;
		}
		uint64_t prev = atomicCompSwap(Word64(a).v, old, nv);
		if (prev == old) {
			return;
		}
		old = prev;
	}
#endif
}
#endif

#if MEAN_ACC64
// addWord adds v to the word at a and returns its previous value.
uint addWord(addr_t a, uint v) {
#if ATOMICS_NATIVE
	return atomicAdd(Word(a).w, v);
#else
	uint old = Word(a).w;
	for (;;) {
		uint prev = atomicCompSwap(Word(a).w, old, old + v);
		if (prev == old) {
			return old;
		}
		old = prev;
	}
#endif
}

// accAdd adds x to the 64-bit mean sum of element e with 32-bit atomics
// only: the low word first, then the high word with the carry. Every
// carry out of the low word is counted exactly once (the atomics on it are
// totally ordered), so once all updates are in, the two words hold the
// exact sum; no device feature beyond 32-bit atomics is needed.
void accAdd(pos_t e, idx_t x) {
	countAtomic(e);
	addr_t a = addressOf(T_ACC, offsetOf(count_t(e), 8u));
#if INT64
	uint lo = uint(x), hi = uint(uint64_t(x) >> 32);
#else
	uint lo = x.x, hi = x.y;
#endif
	uint old = addWord(a, lo);
	hi += old + lo < old ? 1u : 0u;
	if (hi != 0u) {
		addWord(addrAdd(a, 4u), hi);
	}
}

idx_t loadAcc(pos_t e) {
#if INT64
	return int64_t(Word64(addressOf(T_ACC, offsetOf(count_t(e), 8u))).v);
#else
	return Word2(addressOf(T_ACC, offsetOf(count_t(e), 8u))).v;
#endif
}

void storeAcc(pos_t e, idx_t v) {
#if INT64
	Word64(addressOf(T_ACC, offsetOf(count_t(e), 8u))).v = uint64_t(v);
#else
	Word2(addressOf(T_ACC, offsetOf(count_t(e), 8u))).v = v;
#endif
}
#endif
