#include "textflag.h"

// The serial fold's float32 sums at stride 1 (serial.go, serialDirect):
// for j in [0, n) in order, upd[j] is added to out[i], out first (as Go's
// out[i] += upd[j], so that of two NaNs the output's is kept), i the
// index raw[j] plus s where it is negative and m (s or 0) allows; the
// first j whose index is then out of [0, s) is returned, the units before
// it folded, or -1.
//
// Four units at a time: where all four indices lie in [0, s) as they
// are (one unsigned compare each), their four adds follow with no other
// work; a group with an index that is negative or out of range is folded
// unit by unit with the full check. The adds of a group are in order,
// each a load, add and store, so that two of them onto one element see
// each other. 16M sums with int64 indices into 4 MiB (SE-sum-dup) took
// 32.2-32.8 ms of thread CPU time on a loaded 2-core AMD EPYC (Zen 4),
// against 37-40 ms for the Go loop as serialDirect runs it (one unit at
// a time, the negative index adjusted without a branch, the stride a
// variable) and 35 ms for that loop at stride 1; prefetching the targets
// ahead (8 to 128 units) made it slower at every distance tried.
//
// Registers: DI out, R8 s, SI raw, DX upd, BX n, R9 m, CX j, R11 n
// rounded down to a multiple of 4; AX, R10, R12, R13 a group's indices.

#define SETUP \
	MOVQ	out+0(FP), DI \
	MOVQ	s+8(FP), R8 \
	MOVQ	raw+16(FP), SI \
	MOVQ	upd+24(FP), DX \
	MOVQ	n+32(FP), BX \
	MOVQ	m+40(FP), R9 \
	XORQ	CX, CX \
	MOVQ	BX, R11 \
	ANDQ	$~3, R11

// ADD folds unit CX+k, whose index in [0, s) is in r, through X.
#define ADD(r, k, X) \
	MOVSS	(DI)(r*4), X \
	ADDSS	(k*4)(DX)(CX*4), X \
	MOVSS	X, (DI)(r*4)

// STEP folds unit CX, whose raw index is in AX, with the full check, and
// moves CX on.
#define STEP \
	MOVQ	AX, R10 \
	SARQ	$63, R10 \
	ANDQ	R9, R10 \
	ADDQ	R10, AX \
	CMPQ	AX, R8 \
	JAE	bad \
	ADD(AX, 0, X0) \
	INCQ	CX

#define CHECK4 \
	CMPQ	AX, R8 \
	JAE	slow \
	CMPQ	R10, R8 \
	JAE	slow \
	CMPQ	R12, R8 \
	JAE	slow \
	CMPQ	R13, R8 \
	JAE	slow \
	ADD(AX, 0, X0) \
	ADD(R10, 1, X1) \
	ADD(R12, 2, X2) \
	ADD(R13, 3, X3) \
	ADDQ	$4, CX

// func foldSumF32I64(out unsafe.Pointer, s int, raw, upd unsafe.Pointer, n, m int) int
TEXT ·foldSumF32I64(SB), NOSPLIT|NOFRAME, $0-56
	SETUP
group:
	CMPQ	CX, R11
	JGE	tail
	MOVQ	0(SI)(CX*8), AX
	MOVQ	8(SI)(CX*8), R10
	MOVQ	16(SI)(CX*8), R12
	MOVQ	24(SI)(CX*8), R13
	CHECK4
	JMP	group
slow:
	MOVQ	(SI)(CX*8), AX
	STEP
	MOVQ	(SI)(CX*8), AX
	STEP
	MOVQ	(SI)(CX*8), AX
	STEP
	MOVQ	(SI)(CX*8), AX
	STEP
	JMP	group
tail:
	CMPQ	CX, BX
	JGE	done
	MOVQ	(SI)(CX*8), AX
	STEP
	JMP	tail
done:
	MOVQ	$-1, ret+48(FP)
	RET
bad:
	MOVQ	CX, ret+48(FP)
	RET

// func foldSumF32I32(out unsafe.Pointer, s int, raw, upd unsafe.Pointer, n, m int) int
TEXT ·foldSumF32I32(SB), NOSPLIT|NOFRAME, $0-56
	SETUP
group:
	CMPQ	CX, R11
	JGE	tail
	MOVLQSX	0(SI)(CX*4), AX
	MOVLQSX	4(SI)(CX*4), R10
	MOVLQSX	8(SI)(CX*4), R12
	MOVLQSX	12(SI)(CX*4), R13
	CHECK4
	JMP	group
slow:
	MOVLQSX	(SI)(CX*4), AX
	STEP
	MOVLQSX	(SI)(CX*4), AX
	STEP
	MOVLQSX	(SI)(CX*4), AX
	STEP
	MOVLQSX	(SI)(CX*4), AX
	STEP
	JMP	group
tail:
	CMPQ	CX, BX
	JGE	done
	MOVLQSX	(SI)(CX*4), AX
	STEP
	JMP	tail
done:
	MOVQ	$-1, ret+48(FP)
	RET
bad:
	MOVQ	CX, ret+48(FP)
	RET
