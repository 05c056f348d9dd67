#include "textflag.h"

// func prefetch(addr unsafe.Pointer)
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	addr+0(FP), AX
	PREFETCHT0	(AX)
	RET

// func streamLines(dst, src unsafe.Pointer, n int)
TEXT ·streamLines(SB), NOSPLIT|NOFRAME, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
loop:
	MOVOU	0(SI), X0
	MOVOU	16(SI), X1
	MOVOU	32(SI), X2
	MOVOU	48(SI), X3
	MOVNTO	X0, 0(DI)
	MOVNTO	X1, 16(DI)
	MOVNTO	X2, 32(DI)
	MOVNTO	X3, 48(DI)
	ADDQ	$64, SI
	ADDQ	$64, DI
	DECQ	CX
	JNZ	loop
	RET

// func storeFence()
TEXT ·storeFence(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET
