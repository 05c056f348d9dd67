#include "textflag.h"

// The row builds of a fused SliceScatter with a step of 2 on 4-byte
// elements (interleave.go): dst[2k] = u[k] and dst[2k+1] = dat[2k+1], n
// blocks of 16 elements (AVX-512) or 8 (AVX2).

// func interleave2AVX512(dst, dat, u unsafe.Pointer, n int)
TEXT ·interleave2AVX512(SB), NOSPLIT, $0-32
	MOVQ	dst+0(FP), DI
	MOVQ	dat+8(FP), SI
	MOVQ	u+16(FP), DX
	MOVQ	n+24(FP), CX
	TESTQ	CX, CX
	JZ	done512
	MOVL	$0x5555, AX
	KMOVW	AX, K1
loop512:
	VMOVDQU32	(SI), Z0
	VPEXPANDD	(DX), K1, Z0
	VMOVDQU32	Z0, (DI)
	ADDQ	$64, SI
	ADDQ	$64, DI
	ADDQ	$32, DX
	DECQ	CX
	JNZ	loop512
done512:
	VZEROUPPER
	RET

// func interleave2AVX2(dst, dat, u unsafe.Pointer, n int)
TEXT ·interleave2AVX2(SB), NOSPLIT, $0-32
	MOVQ	dst+0(FP), DI
	MOVQ	dat+8(FP), SI
	MOVQ	u+16(FP), DX
	MOVQ	n+24(FP), CX
	TESTQ	CX, CX
	JZ	done2
loop2:
	VMOVDQU	(SI), Y0
	VPMOVZXDQ	(DX), Y1
	VPBLENDD	$0x55, Y1, Y0, Y0
	VMOVDQU	Y0, (DI)
	ADDQ	$32, SI
	ADDQ	$32, DI
	ADDQ	$16, DX
	DECQ	CX
	JNZ	loop2
done2:
	VZEROUPPER
	RET
