#include "textflag.h"

// The banded fold's loop (banded.go): bandKeepFold keeps a chunk's units
// of one band with AVX2 while it folds the band's list of the chunk
// before, so that the stream of indices and updates and the fold's
// random accesses into out are in flight at once. Its scalar adds are
// VEX-encoded, as the vector code around them: on the 2-core AMD EPYC
// (Zen 2) the legacy SSE forms between 256-bit instructions made the
// loop several times slower.

// BAND_UPD is the offset in bytes of a list's updates from its targets:
// bandListLen entries of 4 bytes (banded.go; TestBandLayout).
#define BAND_UPD 32800

// The offsets of bandParams' fields.
#define BAND_S 0
#define BAND_ADD 8
#define BAND_LO 16
#define BAND_LOM1 24
#define BAND_HI 32
#define BAND_FLAGS 40
#define BAND_PERM 48

// FOLD1 folds entry R12+k of the list at R9 into out at R15 through X.
#define FOLD1(k, X) \
	MOVL (k*4)(R9)(R12*4), AX; \
	VMOVSS (R15)(AX*4), X; \
	VADDSS (BAND_UPD+k*4)(R9)(R12*4), X, X; \
	VMOVSS X, (R15)(AX*4)

// FOLD8 folds the list's next 8 entries, in order, where it has 8 more
// to fold, and jumps to next.
#define FOLD8(next) \
	LEAQ 8(R12), AX; \
	CMPQ AX, folds+56(FP); \
	JA next; \
	PREFETCHT0 1024(R9)(R12*4); \
	PREFETCHT0 (BAND_UPD+1024)(R9)(R12*4); \
	FOLD1(0, X0); \
	FOLD1(1, X1); \
	FOLD1(2, X2); \
	FOLD1(3, X3); \
	FOLD1(4, X0); \
	FOLD1(5, X1); \
	FOLD1(6, X2); \
	FOLD1(7, X3); \
	ADDQ $8, R12; \
	JMP next

// BANDKEEP appends the 8 good keys in Y4 that lie in [lo, hi), less lo,
// and their updates, at DI, to the list at R8 from entry R10, in lane
// order, and moves DI and CX on.
#define BANDKEEP \
	VPCMPGTD Y10, Y4, Y6; \
	VPCMPGTD Y4, Y11, Y7; \
	VPAND Y7, Y6, Y6; \
	VMOVMSKPS Y6, AX; \
	VPSUBD Y9, Y4, Y4; \
	VMOVDQU (DI), Y7; \
	SHLQ $5, AX; \
	VMOVDQU (DX)(AX*1), Y0; \
	VPERMD Y4, Y0, Y2; \
	VPERMD Y7, Y0, Y3; \
	VMOVDQU Y2, (R8)(R10*4); \
	VMOVDQU Y3, BAND_UPD(R8)(R10*4); \
	SHRQ $5, AX; \
	POPCNTL AX, AX; \
	ADDQ AX, R10; \
	ADDQ $32, DI; \
	INCQ CX

// func bandKeepFold(idx, upd unsafe.Pointer, n int, bp *bandParams, keep *bandKept, out, list unsafe.Pointer, folds int) (units, folded int)
//
// bandKeepFold checks the indices of [0, n) rounded down to a multiple
// of 8 (int64, or int32 where bp.flags has 2), 8 at a time, and appends
// the keys (each index plus bp.add where negative) that lie in
// [bp.lo, bp.hi), less bp.lo, with their float32 updates to keep's list,
// in order. It stops before the first group of 8 that holds an index out
// of [0, bp.s). Meanwhile, 8 entries a group, it folds the list at list,
// from its first entry, into out: each entry's update added to out at
// its target. It returns the units it checked and the entries it folded,
// a multiple of 8 no more than folds (the caller folds the rest), having
// moved keep's count on. keep's list needs room for 8 entries more than
// it is given.
TEXT ·bandKeepFold(SB), NOSPLIT, $0-80
	MOVQ idx+0(FP), SI
	MOVQ upd+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ bp+24(FP), BX
	MOVQ keep+32(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R10
	MOVQ out+40(FP), R15
	MOVQ list+48(FP), R9
	XORQ R12, R12
	XORQ CX, CX
	// The groups' count stays in the frame; DX holds the table.
	SHRQ $3, DX
	MOVQ DX, n+16(FP)
	MOVQ BAND_PERM(BX), DX
	VPBROADCASTD BAND_S(BX), Y8
	VPBROADCASTD BAND_LO(BX), Y9
	VPBROADCASTD BAND_LOM1(BX), Y10
	VPBROADCASTD BAND_HI(BX), Y11
	VPBROADCASTQ BAND_ADD(BX), Y12
	VPBROADCASTD BAND_ADD(BX), Y13
	VPCMPEQD Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	MOVQ BAND_FLAGS(BX), AX
	TESTQ $2, AX
	JNZ knarrow

kwide:
	CMPQ CX, n+16(FP)
	JAE kdone
	// Eight int64 indices, each plus add where negative; good when its
	// high half is 0 and its low half in [0, s) (s is below 2^31).
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VPCMPGTQ Y0, Y15, Y2
	VPCMPGTQ Y1, Y15, Y3
	VPAND Y12, Y2, Y2
	VPAND Y12, Y3, Y3
	VPADDQ Y2, Y0, Y0
	VPADDQ Y3, Y1, Y1
	VSHUFPS $0x88, Y1, Y0, Y4
	VSHUFPS $0xDD, Y1, Y0, Y5
	VPERMQ $0xD8, Y4, Y4
	VPERMQ $0xD8, Y5, Y5
	VPCMPEQD Y15, Y5, Y5
	VPCMPGTD Y4, Y8, Y6
	VPCMPGTD Y14, Y4, Y7
	VPAND Y6, Y5, Y5
	VPAND Y7, Y5, Y5
	VMOVMSKPS Y5, AX
	CMPL AX, $0xFF
	JNE kdone
	BANDKEEP
	ADDQ $64, SI
	FOLD8(kwide)

knarrow:
	CMPQ CX, n+16(FP)
	JAE kdone
	VMOVDQU (SI), Y4
	VPSRAD $31, Y4, Y2
	VPAND Y13, Y2, Y2
	VPADDD Y2, Y4, Y4
	VPCMPGTD Y4, Y8, Y6
	VPCMPGTD Y14, Y4, Y7
	VPAND Y7, Y6, Y6
	VMOVMSKPS Y6, AX
	CMPL AX, $0xFF
	JNE kdone
	BANDKEEP
	ADDQ $32, SI
	FOLD8(knarrow)

kdone:
	MOVQ keep+32(FP), AX
	MOVQ R10, 8(AX)
	SHLQ $3, CX
	MOVQ CX, units+64(FP)
	MOVQ R12, folded+72(FP)
	VZEROUPPER
	RET

// func bandLayout() (updOffset int)
//
// bandLayout returns this file's BAND_UPD, for TestBandLayout.
TEXT ·bandLayout(SB), NOSPLIT, $0-8
	MOVQ $BAND_UPD, updOffset+0(FP)
	RET
