#include "textflag.h"

// The partition loops of binned scatters (see binsimd.go and
// binsimd_amd64.go, whose binStage this file reads and writes at the
// offsets below): binPartition and decodeTargets need AVX-512 Foundation,
// binPartitionKeys and binFlush AVX2 and BMI2.

#define NBINS 128
// A stage row: 96 targets (384 bytes), then room for 96 updates of up to
// 8 bytes.
#define RSZ 1152
#define RU 384
#define STAGE_CNT (NBINS*RSZ)
#define STAGE_POS (STAGE_CNT+8*NBINS)
#define STAGE_TB (STAGE_POS+8*NBINS)
#define STAGE_UB (STAGE_TB+8)
#define STAGE_NEXT (STAGE_TB+16)
#define STAGE_BLK (STAGE_TB+24)
#define STAGE_BB (STAGE_TB+32)
#define STAGE_S (STAGE_TB+40)
#define STAGE_ADD (STAGE_TB+48)
#define STAGE_MUL (STAGE_TB+56)
#define STAGE_SHIFT (STAGE_TB+64)
#define STAGE_FLAGS (STAGE_TB+72)
#define STAGE_ESIZE (STAGE_TB+80)
// The bit of STAGE_FLAGS for flushes with plain stores (stageCached).
#define STAGE_CACHED 8

// CHECKCONSTS sets the registers LOAD64 and LOAD32 use from the bound s
// and the addend for negative indices at soff(BX) and aoff(BX).
#define CHECKCONSTS(soff, aoff) \
	VPBROADCASTQ soff(BX), Z8; \
	VPBROADCASTQ aoff(BX), Z12; \
	VPBROADCASTD soff(BX), Z13; \
	VPBROADCASTD aoff(BX), Z14; \
	VPXORD Z15, Z15, Z15

// LOAD64 loads 16 int64 indices at SI, checks them and leaves the keys
// (index, plus s where negative and allowed) in Z2; it jumps to bad when
// one is out of range. It keeps port 5 free for BIN: the addend comes from
// the sign by shifts, a key is good when its high half is zero and its low
// half below s, and one permutation (Z14's indices, PERMEVEN) gathers the
// low halves.
#define LOAD64 \
	VMOVDQU64 (SI), Z0; \
	VMOVDQU64 64(SI), Z1; \
	VPSRAQ $63, Z0, Z3; \
	VPSRAQ $63, Z1, Z6; \
	VPANDQ Z12, Z3, Z3; \
	VPANDQ Z12, Z6, Z6; \
	VPADDQ Z3, Z0, Z0; \
	VPADDQ Z6, Z1, Z1; \
	VPSRLQ $32, Z0, Z3; \
	VPSRLQ $32, Z1, Z6; \
	VPORQ Z3, Z6, Z3; \
	VPTESTMQ Z3, Z3, K3; \
	VMOVDQA32 Z14, Z2; \
	VPERMI2D Z1, Z0, Z2; \
	VPCMPUD $5, Z13, Z2, K2; \
	KORTESTW K2, K3; \
	JNZ bad

// PERMEVEN sets Z14 to the indices of the even dwords of two vectors, for
// LOAD64 (LOAD32 uses Z14 for its addend).
#define PERMEVEN \
	VMOVDQU32 evens<>(SB), Z14

DATA evens<>+0(SB)/4, $0
DATA evens<>+4(SB)/4, $2
DATA evens<>+8(SB)/4, $4
DATA evens<>+12(SB)/4, $6
DATA evens<>+16(SB)/4, $8
DATA evens<>+20(SB)/4, $10
DATA evens<>+24(SB)/4, $12
DATA evens<>+28(SB)/4, $14
DATA evens<>+32(SB)/4, $16
DATA evens<>+36(SB)/4, $18
DATA evens<>+40(SB)/4, $20
DATA evens<>+44(SB)/4, $22
DATA evens<>+48(SB)/4, $24
DATA evens<>+52(SB)/4, $26
DATA evens<>+56(SB)/4, $28
DATA evens<>+60(SB)/4, $30
GLOBL evens<>(SB), RODATA|NOPTR, $64

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
	VMOVDQU32 Z6, (RSZ*b)(BX)(AX*4); \
	VMOVDQU32 Z7, (RSZ*b+RU)(BX)(AX*4); \
	KMOVW K1, CX; \
	POPCNTL CX, CX; \
	ADDQ CX, AX; \
	MOVQ AX, (STAGE_CNT+8*b)(BX); \
	CMPQ AX, $64; \
	JB 3(PC); \
	MOVQ $b, R9; \
	CALL binFlush<>(SB)

#define BINS4 \
	BIN(0, Z16); \
	BIN(1, Z17); \
	BIN(2, Z18); \
	BIN(3, Z19)

#define BINS8 \
	BINS4; \
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

// PARTLOOP is binPartition's loop for one index type (LOAD) and number of
// bins (BINS): groups of 16 until DX groups are done.
#define PARTLOOP(loop, LOAD, BINS, istep) \
loop: \
	PREFETCHT0 (64*istep)(SI); \
	PREFETCHT0 (64*istep+64)(SI); \
	PREFETCHT0 4096(DI); \
	LOAD; \
	TARGETS; \
	BINS; \
	ADDQ $istep, SI; \
	ADDQ $64, DI; \
	INCQ R8; \
	CMPQ R8, DX; \
	JB loop; \
	JMP done

// func binPartition(idx, upd unsafe.Pointer, n int, st *binStage) int
TEXT ·binPartition(SB), NOSPLIT, $0-40
	MOVQ idx+0(FP), SI
	MOVQ upd+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ st+24(FP), BX
	XORQ R8, R8
	SHRQ $4, DX
	JZ done
	CHECKCONSTS(STAGE_S, STAGE_ADD)
	VPBROADCASTD STAGE_MUL(BX), Z11
	VMOVQ STAGE_SHIFT(BX), X9
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
	ANDQ $(STAGE_CACHED-1), AX
	TESTQ $2, AX
	JNZ 2(PC)
	PERMEVEN
	CMPQ AX, $1
	JEQ wide16
	CMPQ AX, $2
	JEQ narrow8
	CMPQ AX, $3
	JEQ narrow16
	CMPQ AX, $4
	JEQ wide4
	CMPQ AX, $6
	JEQ narrow4

	PARTLOOP(wide8, LOAD64, BINS8, 128)
	PARTLOOP(wide4, LOAD64, BINS4, 128)
	PARTLOOP(narrow4, LOAD32, BINS4, 64)
	PARTLOOP(wide16, LOAD64, BINS16, 128)
	PARTLOOP(narrow8, LOAD32, BINS8, 64)
	PARTLOOP(narrow16, LOAD32, BINS16, 64)

done:
bad:
	SHLQ $4, R8
	MOVQ R8, ret+32(FP)
	VZEROUPPER
	RET

// binFlush moves the first 64 entries of bin R9's row, which holds AX, to
// the end of the bin's list and chains a new block to the list when that
// fills its block, as binStage.flush does. It keeps BX, SI, DI, DX, R8
// and R14.
TEXT binFlush<>(SB), NOSPLIT|NOFRAME, $0
	IMUL3Q $RSZ, R9, R13
	ADDQ BX, R13
	MOVQ (STAGE_POS)(BX)(R9*8), R11
	// Targets: 4 lines, then entries 64 to 79 to the row's start.
	MOVQ STAGE_TB(BX), R12
	LEAQ (R12)(R11*4), R12
	TESTQ $STAGE_CACHED, STAGE_FLAGS(BX)
	JNZ cachedflush
	VMOVDQU 0(R13), Y10
	VMOVNTDQ Y10, 0(R12)
	VMOVDQU 32(R13), Y10
	VMOVNTDQ Y10, 32(R12)
	VMOVDQU 64(R13), Y10
	VMOVNTDQ Y10, 64(R12)
	VMOVDQU 96(R13), Y10
	VMOVNTDQ Y10, 96(R12)
	VMOVDQU 128(R13), Y10
	VMOVNTDQ Y10, 128(R12)
	VMOVDQU 160(R13), Y10
	VMOVNTDQ Y10, 160(R12)
	VMOVDQU 192(R13), Y10
	VMOVNTDQ Y10, 192(R12)
	VMOVDQU 224(R13), Y10
	VMOVNTDQ Y10, 224(R12)
	VMOVDQU 256(R13), Y10
	VMOVDQU Y10, 0(R13)
	VMOVDQU 288(R13), Y10
	VMOVDQU Y10, 32(R13)
	// Updates: esize lines, then entries 64 to 79 (up to 128 bytes).
	MOVQ STAGE_ESIZE(BX), CX
	MOVQ CX, R10
	IMULQ R11, R10
	ADDQ STAGE_UB(BX), R10
	LEAQ RU(R13), R12
	MOVQ CX, R11

uline:
	VMOVDQU 0(R12), Y10
	VMOVNTDQ Y10, 0(R10)
	VMOVDQU 32(R12), Y10
	VMOVNTDQ Y10, 32(R10)
	ADDQ $64, R12
	ADDQ $64, R10
	DECQ R11
	JNZ uline
	VMOVDQU 0(R12), Y10
	VMOVDQU Y10, RU(R13)
	VMOVDQU 32(R12), Y10
	VMOVDQU Y10, (RU+32)(R13)
	VMOVDQU 64(R12), Y10
	VMOVDQU Y10, (RU+64)(R13)
	VMOVDQU 96(R12), Y10
	VMOVDQU Y10, (RU+96)(R13)
flushtail:
	SUBQ $64, AX
	MOVQ AX, (STAGE_CNT)(BX)(R9*8)
	MOVQ (STAGE_POS)(BX)(R9*8), R11
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

// cachedflush is binFlush with plain stores (STAGE_CACHED): the lists stay
// in the caches for a fold that follows soon. R12 is where the targets go.
cachedflush:
	VMOVDQU 0(R13), Y10
	VMOVDQU Y10, 0(R12)
	VMOVDQU 32(R13), Y10
	VMOVDQU Y10, 32(R12)
	VMOVDQU 64(R13), Y10
	VMOVDQU Y10, 64(R12)
	VMOVDQU 96(R13), Y10
	VMOVDQU Y10, 96(R12)
	VMOVDQU 128(R13), Y10
	VMOVDQU Y10, 128(R12)
	VMOVDQU 160(R13), Y10
	VMOVDQU Y10, 160(R12)
	VMOVDQU 192(R13), Y10
	VMOVDQU Y10, 192(R12)
	VMOVDQU 224(R13), Y10
	VMOVDQU Y10, 224(R12)
	VMOVDQU 256(R13), Y10
	VMOVDQU Y10, 0(R13)
	VMOVDQU 288(R13), Y10
	VMOVDQU Y10, 32(R13)
	MOVQ STAGE_ESIZE(BX), CX
	MOVQ CX, R10
	IMULQ R11, R10
	ADDQ STAGE_UB(BX), R10
	LEAQ RU(R13), R12
	MOVQ CX, R11

culine:
	VMOVDQU 0(R12), Y10
	VMOVDQU Y10, 0(R10)
	VMOVDQU 32(R12), Y10
	VMOVDQU Y10, 32(R10)
	ADDQ $64, R12
	ADDQ $64, R10
	DECQ R11
	JNZ culine
	VMOVDQU 0(R12), Y10
	VMOVDQU Y10, RU(R13)
	VMOVDQU 32(R12), Y10
	VMOVDQU Y10, (RU+32)(R13)
	VMOVDQU 64(R12), Y10
	VMOVDQU Y10, (RU+64)(R13)
	VMOVDQU 96(R12), Y10
	VMOVDQU Y10, (RU+96)(R13)
	JMP flushtail

// KEYPAIR appends two entries: the targets at SI and SI+4 and the updates
// at DI and DI+SCALE (LOADU loads one into R11, STOREU stores R11). The
// second's count is read before the first's is stored, and corrected when
// both have the same bin, so that the pair does not wait on the store. A
// row that reaches 64 is flushed (a pair can take a row to 65: the first
// flush re-reads its count, which the second's store may have raised).
#define KEYPAIR(LOADU, STOREU, SCALE, next, c2) \
	MOVL (SI), R11; \
	SHRXQ R8, R11, R9; \
	ANDQ $(NBINS-1), R9; \
	MOVL 4(SI), R13; \
	SHRXQ R8, R13, R10; \
	ANDQ $(NBINS-1), R10; \
	MOVQ (STAGE_CNT)(BX)(R9*8), AX; \
	MOVQ (STAGE_CNT)(BX)(R10*8), CX; \
	XORL R12, R12; \
	CMPQ R9, R10; \
	SETEQ R12B; \
	ADDQ R12, CX; \
	IMUL3Q $RSZ, R9, R12; \
	ADDQ BX, R12; \
	MOVL R11, (R12)(AX*4); \
	LOADU (DI), R11; \
	STOREU R11, RU(R12)(AX*SCALE); \
	IMUL3Q $RSZ, R10, R12; \
	ADDQ BX, R12; \
	MOVL R13, (R12)(CX*4); \
	LOADU SCALE(DI), R11; \
	STOREU R11, RU(R12)(CX*SCALE); \
	INCQ AX; \
	MOVQ AX, (STAGE_CNT)(BX)(R9*8); \
	INCQ CX; \
	MOVQ CX, (STAGE_CNT)(BX)(R10*8); \
	CMPQ AX, $64; \
	JB c2; \
	MOVQ R10, R14; \
	MOVQ (STAGE_CNT)(BX)(R9*8), AX; \
	CALL binFlush<>(SB); \
	MOVQ R14, R10; \
	MOVQ (STAGE_CNT)(BX)(R10*8), CX; \
c2: \
	CMPQ CX, $64; \
	JB next; \
	MOVQ R10, R9; \
	MOVQ CX, AX; \
	CALL binFlush<>(SB); \
next:

// KEYLOOP is binPartitionKeys for one update size: pairs, then the last
// entry alone when n is odd.
#define KEYLOOP(LOADU, STOREU, SCALE, loop, next, c2, one, done) \
	SHRQ $1, DX; \
	JZ one; \
loop: \
	PREFETCHT0 (128*SCALE)(DI); \
	KEYPAIR(LOADU, STOREU, SCALE, next, c2); \
	ADDQ $8, SI; \
	ADDQ $(2*SCALE), DI; \
	DECQ DX; \
	JNZ loop; \
one: \
	MOVQ n+16(FP), DX; \
	TESTQ $1, DX; \
	JZ done; \
	MOVL (SI), R11; \
	SHRXQ R8, R11, R9; \
	ANDQ $(NBINS-1), R9; \
	MOVQ (STAGE_CNT)(BX)(R9*8), AX; \
	IMUL3Q $RSZ, R9, R12; \
	ADDQ BX, R12; \
	MOVL R11, (R12)(AX*4); \
	LOADU (DI), R11; \
	STOREU R11, RU(R12)(AX*SCALE); \
	INCQ AX; \
	MOVQ AX, (STAGE_CNT)(BX)(R9*8); \
	CMPQ AX, $64; \
	JB done; \
	CALL binFlush<>(SB); \
	JMP done

// func binPartitionKeys(keys, upd unsafe.Pointer, n int, st *binStage)
//
// The scalar loop: each of the n targets at keys (int32), with its update
// at upd (st.esize bytes: 1, 2, 4 or 8), goes to the stage row of bin
// target>>st.shift, and a row that reaches 64 entries is flushed. It needs
// AVX2 (for binFlush) and BMI2.
TEXT ·binPartitionKeys(SB), NOSPLIT, $0-32
	MOVQ keys+0(FP), SI
	MOVQ upd+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ st+24(FP), BX
	MOVQ STAGE_SHIFT(BX), R8
	MOVQ STAGE_ESIZE(BX), AX
	CMPQ AX, $4
	JEQ k4
	CMPQ AX, $8
	JEQ k8
	CMPQ AX, $2
	JEQ k2
	KEYLOOP(MOVBLZX, MOVB, 1, loop1, next1, c21, one1, kdone)

k2:
	KEYLOOP(MOVWLZX, MOVW, 2, loop2, next2, c22, one2, kdone)

k4:
	KEYLOOP(MOVL, MOVL, 4, loop4, next4, c24, one4, kdone)

k8:
	KEYLOOP(MOVQ, MOVQ, 8, loop8, next8, c28, one8, kdone)

kdone:
	VZEROUPPER
	RET

// The offsets of decodeParams.
#define DEC_S 0
#define DEC_ADD 8
#define DEC_MUL 16
#define DEC_BASE 24
#define DEC_INNER 32
#define DEC_K 40
#define DEC_FLAGS 48

DATA iota16<>+0(SB)/4, $0
DATA iota16<>+4(SB)/4, $1
DATA iota16<>+8(SB)/4, $2
DATA iota16<>+12(SB)/4, $3
DATA iota16<>+16(SB)/4, $4
DATA iota16<>+20(SB)/4, $5
DATA iota16<>+24(SB)/4, $6
DATA iota16<>+28(SB)/4, $7
DATA iota16<>+32(SB)/4, $8
DATA iota16<>+36(SB)/4, $9
DATA iota16<>+40(SB)/4, $10
DATA iota16<>+44(SB)/4, $11
DATA iota16<>+48(SB)/4, $12
DATA iota16<>+52(SB)/4, $13
DATA iota16<>+56(SB)/4, $14
DATA iota16<>+60(SB)/4, $15
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// DECODE turns the keys in Z2 into targets, index*mul + base + k for
// the columns k of the group (see decodeParams), stores them at DI and
// moves to the next group.
#define DECODE \
	VPMULLD Z11, Z2, Z2; \
	MOVQ R10, AX; \
	ADDQ R13, AX; \
	VPBROADCASTD AX, Z3; \
	VPADDD Z9, Z3, Z3; \
	VPADDD Z3, Z2, Z2; \
	VMOVDQU32 Z2, (DI); \
	ADDQ $64, DI; \
	ADDQ R12, R10; \
	CMPQ R10, R11; \
	JNE 2(PC); \
	XORQ R10, R10; \
	INCQ R8

// func decodeTargets(idx, dst unsafe.Pointer, n int, d *decodeParams) int
//
// decodeTargets checks the indices of [0, n) rounded down to a multiple of
// 16 (int64, or int32 where d.flags has 2), 16 at a time, and stores
// their targets at dst as int32. It stops before the first group of 16
// that holds a bad index and returns the units it decoded.
TEXT ·decodeTargets(SB), NOSPLIT, $0-40
	MOVQ idx+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ d+24(FP), BX
	XORQ R8, R8
	SHRQ $4, DX
	JZ ddone
	CHECKCONSTS(DEC_S, DEC_ADD)
	VPBROADCASTD DEC_MUL(BX), Z11
	MOVQ DEC_BASE(BX), R13
	MOVQ DEC_INNER(BX), R11
	MOVQ DEC_K(BX), R10
	// Columns: k advances by 16 a group and wraps at inner; without
	// columns (inner 0) it stays 0.
	VPXORD Z9, Z9, Z9
	XORQ R12, R12
	TESTQ R11, R11
	JZ 3(PC)
	VMOVDQU32 iota16<>(SB), Z9
	MOVQ $16, R12
	MOVQ DEC_FLAGS(BX), AX
	TESTQ $2, AX
	JNZ dnarrow
	PERMEVEN

dwide:
	PREFETCHT0 4096(SI)
	PREFETCHT0 4160(SI)
	LOAD64
	DECODE
	ADDQ $128, SI
	CMPQ R8, DX
	JB dwide
	JMP ddone

dnarrow:
	PREFETCHT0 2048(SI)
	LOAD32
	DECODE
	ADDQ $64, SI
	CMPQ R8, DX
	JB dnarrow

ddone:
bad:
	SHLQ $4, R8
	MOVQ R8, ret+32(FP)
	VZEROUPPER
	RET

// func stageLayout() (nbins, row, rowUpdates, cnt, tb, esize int)
//
// stageLayout returns this file's view of binStage, for
// TestSIMDStageLayout.
TEXT ·stageLayout(SB), NOSPLIT, $0-48
	MOVQ $NBINS, nbins+0(FP)
	MOVQ $RSZ, row+8(FP)
	MOVQ $RU, rowUpdates+16(FP)
	MOVQ $STAGE_CNT, cnt+24(FP)
	MOVQ $STAGE_TB, tb+32(FP)
	MOVQ $STAGE_ESIZE, esize+40(FP)
	RET

// FOLDLOOP is foldVec's loop for one operation: VOP combines the 16
// elements gathered into Z3 with the updates in Z1, SCALAR folds lane R9
// (target R10) alone.
#define FOLDLOOP(loop, next, slow, lane, VOP, SCALAR) \
loop: \
	VMOVDQU32 (SI), Z0; \
	VMOVDQU32 (DX), Z1; \
	VPCONFLICTD Z0, Z2; \
	VPTESTMD Z2, Z2, K1; \
	KORTESTW K1, K1; \
	JNZ slow; \
	KXNORW K2, K2, K2; \
	VPGATHERDD (DI)(Z0*4), K2, Z3; \
	VOP Z1, Z3, Z3; \
	KXNORW K3, K3, K3; \
	VPSCATTERDD Z3, K3, (DI)(Z0*4); \
next: \
	ADDQ $64, SI; \
	ADDQ $64, DX; \
	INCQ R8; \
	CMPQ R8, CX; \
	JB loop; \
	JMP fdone; \
slow: \
	XORQ R9, R9; \
lane: \
	MOVLQSX (SI)(R9*4), R10; \
	SCALAR; \
	INCQ R9; \
	CMPQ R9, $16; \
	JB lane; \
	JMP next

#define SCALAR_MAXI \
	MOVL (DI)(R10*4), R11; \
	MOVL (DX)(R9*4), R12; \
	CMPL R12, R11; \
	CMOVLGT R12, R11; \
	MOVL R11, (DI)(R10*4)

#define SCALAR_MINI \
	MOVL (DI)(R10*4), R11; \
	MOVL (DX)(R9*4), R12; \
	CMPL R12, R11; \
	CMOVLLT R12, R11; \
	MOVL R11, (DI)(R10*4)

#define SCALAR_MAXU \
	MOVL (DI)(R10*4), R11; \
	MOVL (DX)(R9*4), R12; \
	CMPL R12, R11; \
	CMOVLHI R12, R11; \
	MOVL R11, (DI)(R10*4)

#define SCALAR_MINU \
	MOVL (DI)(R10*4), R11; \
	MOVL (DX)(R9*4), R12; \
	CMPL R12, R11; \
	CMOVLCS R12, R11; \
	MOVL R11, (DI)(R10*4)

// func foldVec(out, tgt, upd unsafe.Pointer, n int, op int) int
//
// foldVec folds the 4-byte updates at upd into the elements of out at the
// int32 targets at tgt, in order, for the units of [0, n) rounded down to a
// multiple of 16, and returns that count. A group of 16 whose targets are
// distinct is gathered, combined and scattered at once; a group with a
// repeated target is folded one lane at a time, in lane order. op: 0 int32
// max, 1 int32 min, 2 uint32 max, 3 uint32 min (foldMaxI32 ... in
// binsimd.go). It needs AVX-512 Foundation and Conflict Detection.
TEXT ·foldVec(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ tgt+8(FP), SI
	MOVQ upd+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ op+32(FP), AX
	XORQ R8, R8
	SHRQ $4, CX
	JZ fdone
	CMPQ AX, $1
	JEQ fmini
	CMPQ AX, $2
	JEQ fmaxu
	CMPQ AX, $3
	JEQ fminu

	FOLDLOOP(fmaxi, nmaxi, smaxi, lmaxi, VPMAXSD, SCALAR_MAXI)
	FOLDLOOP(fmini, nmini, smini, lmini, VPMINSD, SCALAR_MINI)
	FOLDLOOP(fmaxu, nmaxu, smaxu, lmaxu, VPMAXUD, SCALAR_MAXU)
	FOLDLOOP(fminu, nminu, sminu, lminu, VPMINUD, SCALAR_MINU)

fdone:
	SHLQ $4, R8
	MOVQ R8, ret+40(FP)
	VZEROUPPER
	RET
