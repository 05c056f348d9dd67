#include "textflag.h"

// The partition step of binned scatters with AVX-512 (see binsimd.go and
// binsimd_amd64.go, whose simdStage this file reads and writes at the
// offsets below).

#define STAGE_T 0
#define STAGE_U 6144
#define STAGE_CNT 12288
#define STAGE_POS 12416
#define STAGE_TB 12544
#define STAGE_UB 12552
#define STAGE_NEXT 12560
#define STAGE_BLK 12568
#define STAGE_BB 12576
#define STAGE_S 12584
#define STAGE_ADD 12592
#define STAGE_MUL 12600
#define STAGE_SHIFT 12608
#define STAGE_FLAGS 12616
#define ROW 384

// LOAD64 loads 16 int64 indices at SI, checks them and leaves the keys
// (index, plus s where negative and allowed) in Z2; it jumps to bad when
// one is out of range.
#define LOAD64 \
	VMOVDQU64 (SI), Z0; \
	VMOVDQU64 64(SI), Z1; \
	VPCMPQ $1, Z15, Z0, K4; \
	VPCMPQ $1, Z15, Z1, K5; \
	VPADDQ Z12, Z0, K4, Z0; \
	VPADDQ Z12, Z1, K5, Z1; \
	VPCMPUQ $5, Z8, Z0, K2; \
	VPCMPUQ $5, Z8, Z1, K3; \
	KORTESTW K2, K3; \
	JNZ bad; \
	VPMOVQD Z0, Y2; \
	VPMOVQD Z1, Y3; \
	VINSERTI64X4 $1, Y3, Z2, Z2

// LOAD32 is LOAD64 for 16 int32 indices.
#define LOAD32 \
	VMOVDQU32 (SI), Z2; \
	VPCMPD $1, Z15, Z2, K4; \
	VPADDD Z14, Z2, K4, Z2; \
	VPCMPUD $5, Z13, Z2, K2; \
	KORTESTW K2, K2; \
	JNZ bad

// TARGETS turns the keys in Z2 into targets (times the stride), their
// bins into Z4, and loads the 16 updates at DI into Z5.
#define TARGETS \
	VPMULLD Z11, Z2, Z2; \
	VPSRLD X9, Z2, Z4; \
	VMOVDQU32 (DI), Z5

// BIN appends the lanes of bin b (whose number ZB holds in every lane) to
// the bin's stage rows, in lane order, and flushes a row that reaches 64.
#define BIN(b, ZB) \
	VPCMPEQD ZB, Z4, K1; \
	VPCOMPRESSD Z2, K1, Z6; \
	VPCOMPRESSD Z5, K1, Z7; \
	MOVQ (STAGE_CNT+8*b)(BX), AX; \
	VMOVDQU32 Z6, (STAGE_T+ROW*b)(BX)(AX*4); \
	VMOVDQU32 Z7, (STAGE_U+ROW*b)(BX)(AX*4); \
	KMOVW K1, CX; \
	POPCNTL CX, CX; \
	ADDQ CX, AX; \
	MOVQ AX, (STAGE_CNT+8*b)(BX); \
	CMPQ AX, $64; \
	JB 3(PC); \
	MOVQ $b, R9; \
	CALL binFlush<>(SB)

#define BINS8 \
	BIN(0, Z16); \
	BIN(1, Z17); \
	BIN(2, Z18); \
	BIN(3, Z19); \
	BIN(4, Z20); \
	BIN(5, Z21); \
	BIN(6, Z22); \
	BIN(7, Z23)

#define BINS16 \
	BINS8; \
	BIN(8, Z24); \
	BIN(9, Z25); \
	BIN(10, Z26); \
	BIN(11, Z27); \
	BIN(12, Z28); \
	BIN(13, Z29); \
	BIN(14, Z30); \
	BIN(15, Z31)

#define BCAST(v, Z) \
	MOVL $v, AX; \
	VPBROADCASTD AX, Z

// func binPartition(idx, upd unsafe.Pointer, n int, st *simdStage) int
TEXT ·binPartition(SB), NOSPLIT, $0-40
	MOVQ idx+0(FP), SI
	MOVQ upd+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ st+24(FP), BX
	XORQ R8, R8
	SHRQ $4, DX
	JZ done
	VPBROADCASTQ STAGE_S(BX), Z8
	VPBROADCASTQ STAGE_ADD(BX), Z12
	VPBROADCASTD STAGE_S(BX), Z13
	VPBROADCASTD STAGE_ADD(BX), Z14
	VPBROADCASTD STAGE_MUL(BX), Z11
	VMOVQ STAGE_SHIFT(BX), X9
	VPXORD Z15, Z15, Z15
	BCAST(0, Z16)
	BCAST(1, Z17)
	BCAST(2, Z18)
	BCAST(3, Z19)
	BCAST(4, Z20)
	BCAST(5, Z21)
	BCAST(6, Z22)
	BCAST(7, Z23)
	BCAST(8, Z24)
	BCAST(9, Z25)
	BCAST(10, Z26)
	BCAST(11, Z27)
	BCAST(12, Z28)
	BCAST(13, Z29)
	BCAST(14, Z30)
	BCAST(15, Z31)
	MOVQ STAGE_FLAGS(BX), AX
	CMPQ AX, $1
	JEQ wide16
	CMPQ AX, $2
	JEQ narrow8
	CMPQ AX, $3
	JEQ narrow16

wide8:
	LOAD64
	TARGETS
	BINS8
	ADDQ $128, SI
	ADDQ $64, DI
	INCQ R8
	CMPQ R8, DX
	JB wide8
	JMP done

wide16:
	LOAD64
	TARGETS
	BINS16
	ADDQ $128, SI
	ADDQ $64, DI
	INCQ R8
	CMPQ R8, DX
	JB wide16
	JMP done

narrow8:
	LOAD32
	TARGETS
	BINS8
	ADDQ $64, SI
	ADDQ $64, DI
	INCQ R8
	CMPQ R8, DX
	JB narrow8
	JMP done

narrow16:
	LOAD32
	TARGETS
	BINS16
	ADDQ $64, SI
	ADDQ $64, DI
	INCQ R8
	CMPQ R8, DX
	JB narrow16

done:
bad:
	SHLQ $4, R8
	MOVQ R8, ret+32(FP)
	VZEROUPPER
	RET

// COPYROW streams the first 64 entries (4 cache lines) of the stage row at
// R13 to R12 and moves entries 64 to 79 to the row's start.
#define COPYROW \
	VMOVDQU32 0(R13), Z10; \
	VMOVNTDQ Z10, 0(R12); \
	VMOVDQU32 64(R13), Z10; \
	VMOVNTDQ Z10, 64(R12); \
	VMOVDQU32 128(R13), Z10; \
	VMOVNTDQ Z10, 128(R12); \
	VMOVDQU32 192(R13), Z10; \
	VMOVNTDQ Z10, 192(R12); \
	VMOVDQU32 256(R13), Z10; \
	VMOVDQU32 Z10, 0(R13)

// binFlush moves the first 64 entries of bin R9's rows, which hold AX, to
// the end of the bin's list and chains a new block to the list when that
// fills its block, as simdStage.flush does.
TEXT binFlush<>(SB), NOSPLIT|NOFRAME, $0
	MOVQ R9, R10
	IMULQ $ROW, R10
	MOVQ (STAGE_POS)(BX)(R9*8), R11
	MOVQ STAGE_TB(BX), R12
	LEAQ (R12)(R11*4), R12
	LEAQ (STAGE_T)(BX)(R10*1), R13
	COPYROW
	MOVQ STAGE_UB(BX), R12
	LEAQ (R12)(R11*4), R12
	LEAQ (STAGE_U)(BX)(R10*1), R13
	COPYROW
	SUBQ $64, AX
	MOVQ AX, (STAGE_CNT)(BX)(R9*8)
	ADDQ $64, R11
	MOVQ STAGE_BB(BX), CX
	MOVQ $1, R10
	SHLQ CX, R10
	DECQ R10
	TESTQ R10, R11
	JNZ flushed
	LEAQ -1(R11), R12
	SHRQ CX, R12
	MOVQ STAGE_NEXT(BX), R13
	MOVQ STAGE_BLK(BX), R10
	MOVL R10, (R13)(R12*4)
	MOVQ R10, R11
	SHLQ CX, R11
	INCQ R10
	MOVQ R10, STAGE_BLK(BX)

flushed:
	MOVQ R11, (STAGE_POS)(BX)(R9*8)
	RET
