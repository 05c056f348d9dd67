#include "textflag.h"

// The row adds of the owned path (rowadd.go): for i in [0, n), the inner
// float32 of the update row src[i] are added to those of the output row
// dst[i], in order of i, each column with the output as the first operand
// (as Go's out[c] += upd[c], so that of two NaNs the output's is kept).
// The output row dst[i+AHEAD] (for writing) and the update row
// src[i+AHEAD] are prefetched in the same loop: the first and last cache
// line of each. An owner's update rows are every other one or so, at
// random, which the hardware prefetchers do not follow: prefetching them
// too took SND-sum-dup (1M rows of 16 float32, two owners) from 10.2 to
// 8.5 ms at 32 rows ahead, 8.1 ms at 64 (9.5 at 16, 8.9 at 128) on a
// 2-core AMD EPYC (Zen 4).
//
// Registers: R8 out, R9 upd, SI dst, DI src, CX n, DX inner, R10 bytes of
// a row, BX i; R11 and R12 the output and update rows, R13 the columns
// left.

#define AHEAD 64

// PREFETCHW (AX), which the assembler does not know: 0F 0D /1.
#define PREFETCHW_AX BYTE $0x0F; BYTE $0x0D; BYTE $0x08

#define SETUP \
	MOVQ	out+0(FP), R8 \
	MOVQ	upd+8(FP), R9 \
	MOVQ	dst+16(FP), SI \
	MOVQ	src+24(FP), DI \
	MOVQ	n+32(FP), CX \
	MOVQ	inner+40(FP), DX \
	LEAQ	(DX*4), R10 \
	XORQ	BX, BX

// ROW_START prefetches rows dst[i+AHEAD] and src[i+AHEAD] and points R11,
// R12 and R13 at row i.
#define ROW_START(skip) \
	LEAQ	AHEAD(BX), AX \
	CMPQ	AX, CX \
	JAE	skip \
	MOVLQSX	(SI)(AX*4), AX \
	IMULQ	R10, AX \
	ADDQ	R8, AX \
	PREFETCHW_AX \
	LEAQ	-1(AX)(R10*1), AX \
	PREFETCHW_AX \
	LEAQ	AHEAD(BX), AX \
	MOVLQSX	(DI)(AX*4), AX \
	IMULQ	R10, AX \
	ADDQ	R9, AX \
	PREFETCHT0	(AX) \
	PREFETCHT0	-1(AX)(R10*1) \
skip: \
	MOVLQSX	(SI)(BX*4), R11 \
	IMULQ	R10, R11 \
	ADDQ	R8, R11 \
	MOVLQSX	(DI)(BX*4), R12 \
	IMULQ	R10, R12 \
	ADDQ	R9, R12 \
	MOVQ	DX, R13

// func addRowsAVX512(out, upd, dst, src unsafe.Pointer, n, inner int)
TEXT ·addRowsAVX512(SB), NOSPLIT, $0-48
	SETUP
	TESTQ	CX, CX
	JZ	done512
row512:
	ROW_START(pf512)
col16:
	CMPQ	R13, $16
	JB	col8_512
	VMOVUPS	(R11), Z0
	VADDPS	(R12), Z0, Z0
	VMOVUPS	Z0, (R11)
	ADDQ	$64, R11
	ADDQ	$64, R12
	SUBQ	$16, R13
	JMP	col16
col8_512:
	CMPQ	R13, $8
	JB	col1_512
	VMOVUPS	(R11), Y0
	VADDPS	(R12), Y0, Y0
	VMOVUPS	Y0, (R11)
	ADDQ	$32, R11
	ADDQ	$32, R12
	SUBQ	$8, R13
col1_512:
	TESTQ	R13, R13
	JZ	next512
	VMOVSS	(R11), X0
	VADDSS	(R12), X0, X0
	VMOVSS	X0, (R11)
	ADDQ	$4, R11
	ADDQ	$4, R12
	DECQ	R13
	JMP	col1_512
next512:
	INCQ	BX
	CMPQ	BX, CX
	JB	row512
done512:
	VZEROUPPER
	RET

// func addRowsAVX2(out, upd, dst, src unsafe.Pointer, n, inner int)
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-48
	SETUP
	TESTQ	CX, CX
	JZ	done2
row2:
	ROW_START(pf2)
col8_2:
	CMPQ	R13, $8
	JB	col1_2
	VMOVUPS	(R11), Y0
	VADDPS	(R12), Y0, Y0
	VMOVUPS	Y0, (R11)
	ADDQ	$32, R11
	ADDQ	$32, R12
	SUBQ	$8, R13
	JMP	col8_2
col1_2:
	TESTQ	R13, R13
	JZ	next2
	VMOVSS	(R11), X0
	VADDSS	(R12), X0, X0
	VMOVSS	X0, (R11)
	ADDQ	$4, R11
	ADDQ	$4, R12
	DECQ	R13
	JMP	col1_2
next2:
	INCQ	BX
	CMPQ	BX, CX
	JB	row2
done2:
	VZEROUPPER
	RET
