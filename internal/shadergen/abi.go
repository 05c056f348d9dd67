package main

import (
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
)

// The interface between the host code and the kernels: every number both
// sides must agree on is declared here once, and the generator writes it
// out for each side,
//
//	src/abi_gen.glsl    #defines and the push-constant block (common.glsl includes it)
//	abi_gen.go          package shaders: kinds, reductions, stages, spec constant IDs
//	../gpu/abi_gen.go   package gpu: slots, flags, limits, the push block and its packing
//
// so that a flag or a parameter slot is one line below. Enumerations take
// their values from their order (seq, bits); the reductions take theirs
// from ops.Reduction.

// abiConst is one constant. An empty glsl or goName leaves it out of that
// side.
type abiConst struct {
	glsl   string // the macro
	goName string // the Go constant
	value  uint64
	goExpr string // the Go value, when not the number (reductions: Reduction(ops.Sum))
	doc    string // a line after the constant; with a newline, lines above it
}

// abiGroup is a block of constants, one Go const block and one run of
// #defines.
type abiGroup struct {
	doc      string // the comment above the block, on both sides
	pkg      string // "gpu" or "shaders"
	goType   string // the Go type of the constants ("" untyped)
	unsigned bool   // GLSL: uint literals (for uint expressions)
	hex      bool   // GLSL and Go: hexadecimal
	shift    bool   // Go: 1 << n (flags)
	limits   bool   // not an enumeration: values may repeat
	consts   []abiConst
}

// c is a constant whose value its group's constructor gives.
func c(glsl, goName, doc string) abiConst {
	return abiConst{glsl: glsl, goName: goName, doc: doc}
}

// cv is a constant with its own value.
func cv(glsl, goName string, value uint64, doc string) abiConst {
	return abiConst{glsl: glsl, goName: goName, value: value, doc: doc}
}

// seq numbers cs from first on, in order.
func seq(first uint64, cs ...abiConst) []abiConst {
	for i := range cs {
		cs[i].value = first + uint64(i)
	}
	return cs
}

// bits gives cs the bits 1, 2, 4, ... in order.
func bits(cs ...abiConst) []abiConst {
	for i := range cs {
		cs[i].value = 1 << i
	}
	return cs
}

// Values the table itself uses.
const (
	abiLocalSize = 256
	abiHotWords  = 16
	abiRadixBits = 8
)

// abiReductions are the reductions the kernels know, with ops.Reduction's
// numbers: RED_SUM is int(ops.Sum), shaders.RedSum is Reduction(ops.Sum).
var abiReductions = []ops.Reduction{ops.None, ops.Sum, ops.Sub, ops.Prod, ops.Min, ops.Max, ops.Mean}

func reductionGroup() abiGroup {
	g := abiGroup{
		doc: "Reductions: the numbers of ops.Reduction (the generator reads them\n" +
			"from package ops).",
		pkg: "shaders", goType: "Reduction",
	}
	for _, r := range abiReductions {
		name := r.String()
		g.consts = append(g.consts, abiConst{
			glsl:   "RED_" + strings.ToUpper(name),
			goName: "Red" + strings.ToUpper(name[:1]) + name[1:],
			value:  uint64(r),
			goExpr: "Reduction(ops." + opsName(r) + ")",
		})
	}
	return g
}

// opsName returns the name of r's constant in package ops.
func opsName(r ops.Reduction) string {
	if r == ops.None {
		return "None"
	}
	s := r.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// abiGroups is the table, in the order of the generated files.
var abiGroups = []abiGroup{
	{
		doc: "The workgroup size of every kernel (x only). Large groups suit CPU\n" +
			"devices (one group runs on one thread, in SIMD batches) and are a\n" +
			"multiple of every GPU's subgroup size.",
		pkg:    "gpu",
		consts: []abiConst{cv("LOCAL_SIZE", "groupSize", abiLocalSize, "")},
	},
	{
		doc: "The kinds: how updates map onto the output (the KIND variant macro).",
		pkg: "shaders", goType: "Kind",
		consts: seq(1,
			c("KIND_BLOCK", "Block", "An index, or an index tuple, picks a block of Inner contiguous output\n"+
				"units (ScatterUpdate, ScatterNDUpdate, ScatterND)."),
			c("KIND_ELEMENT", "Element", "Every index picks one element along the axis\n"+
				"(ScatterElementsUpdate, Scatter, ScatterElements)."),
			c("KIND_SLICE", "Slice", "Updates fill a strided slice (SliceScatter); no indices.\n"),
			c("KIND_CACHE", "Cache", "Each prefix before the axis writes its rows at consecutive positions\n"+
				"along it from its batch entry's write index (TensorScatter)."),
		),
	},
	reductionGroup(),
	{
		doc: "Kernels of the Sort family (the STAGE variant macro of sort.comp).",
		pkg: "shaders", goType: "Stage",
		consts: seq(1,
			c("STAGE_RADIX_COUNT", "RadixCount", "counts the digits of each tile of keys"),
			c("STAGE_RADIX_SCATTER", "RadixScatter", "moves keys and values to their sorted positions"),
			c("STAGE_SCAN_UP", "ScanUp", "scans blocks in place and writes their totals"),
			c("STAGE_SCAN_DOWN", "ScanDown", "adds the scanned totals back into the blocks"),
		),
	},
	{
		doc: "Specialization constant IDs. SPEC_FLAGS (FlagsConstant) holds a call's\n" +
			"flags: every kernel reads them as a constant, so a pipeline serves one\n" +
			"set of flags (Variant.Specialize sets it). SPEC_RED and\n" +
			"SPEC_PRIV_WORDS (PrivateWordsConstant), the reduction and the\n" +
			"workgroup memory of FLAG_PRIVATE (reduce.glsl), are a variant's own\n" +
			"SpecConstants (Variant.WithPrivateWords changes the second).",
		pkg: "shaders",
		consts: seq(0,
			c("SPEC_RED", "", ""),
			c("SPEC_PRIV_WORDS", "PrivateWordsConstant", ""),
			c("SPEC_FLAGS", "FlagsConstant", ""),
		),
	},
	{
		doc: "The workgroup memory, in 32-bit words, of Scatter variants with\n" +
			"Private set (specialization constant SPEC_PRIV_WORDS) as generated:\n" +
			"outputs of up to PrivateWords*4 bytes are accumulated per workgroup\n" +
			"before they reach the output. Variant.WithPrivateWords specialises\n" +
			"them to up to MaxPrivateWords, where the device's workgroup memory\n" +
			"holds more.",
		pkg:    "shaders",
		consts: []abiConst{cv("", "PrivateWords", 2048, ""), cv("", "MaxPrivateWords", 16384, "")},
	},
	{
		doc: "The call's flags (FLAG_*), specialization constant SPEC_FLAGS.",
		pkg: "gpu", unsigned: true, shift: true,
		consts: bits(
			c("FLAG_NEGATIVE", "flagNegative", "indices may count from the end: [-s, s-1]"),
			c("FLAG_OWNER", "flagOwner", "updates may collide: the last one wins"),
			c("FLAG_MAPS", "flagMaps", "ELEMENT: the outer and inner maps are lists"),
			c("FLAG_ONE_CHUNK", "flagOneChunk", "every tensor fits in one chunk"),
			c("FLAG_COUNT", "flagCount", "resolve counts the updates per slot (owner words)"),
			c("FLAG_TARGET", "flagTarget", "ELEMENT resolve stores targets, not index values"),
			c("FLAG_XTABLES", "flagXTables", "the reduction tensors (T_ACC ...) are present"),
			c("FLAG_USE_INIT", "flagUseInit", "ScatterElementsUpdate-12 use_init_val"),
			c("FLAG_PRIVATE", "flagPrivate", "scatter: accumulate in workgroup memory first"),
			c("FLAG_WALK", "flagWalk", "ELEMENT scatter: one position per column (walkColumn)"),
			c("FLAG_LATER", "flagLater", "updates may collide, but J <= LATER_MAX: the scatter looks at later indices (laterWins), no owner words"),
			c("FLAG_DIRECT", "flagDirect", "reductions: the scatter reads and checks the raw indices (index.glsl); resolve, if any, only checks them"),
			c("FLAG_INDEX_SIGNED", "flagIndexSigned", "FLAG_DIRECT: the index type is signed"),
			c("FLAG_INDEX_2", "flagIndex2", "FLAG_DIRECT: 2-byte indices (none of FLAG_INDEX_2, _4, _8: 1 byte)"),
			c("FLAG_INDEX_4", "flagIndex4", "FLAG_DIRECT: 4-byte indices"),
			c("FLAG_INDEX_8", "flagIndex8", "FLAG_DIRECT: 8-byte indices"),
			c("FLAG_TABLE", "flagTable", "updates may collide: one workgroup resolves every index into a table in workgroup memory (TABLE variants) and marks the losers NO_ROW; no owner words"),
			c("FLAG_CIRCULAR", "flagCircular", "CACHE: positions wrap modulo the axis (mode circular)"),
			c("FLAG_CHECK_ALL", "flagCheckAll", "CACHE linear, batch <= LATER_MAX: the scatter checks every write index before it writes"),
			c("FLAG_ZERO_START", "flagZeroStart", "CACHE: no write_indices; every batch entry starts at 0"),
			c("FLAG_SOFT_FLOATS", "flagSoftFloats", "float sum, sub, prod, mean: the device may flush subnormals, so a step that meets one is computed again in integer arithmetic (reduce.glsl, softStep)"),
			c("FLAG_SOFT_ALWAYS", "flagSoftAlways", "float sum, sub, prod, mean: every step in integer arithmetic (knobs.SoftFloats)"),
			c("FLAG_EXACT_ATOMICS", "flagExactAtomics", "float sum, sub, mean: float atomic add takes only the updates no flush can change (reduce.glsl, atomicExact)"),
			c("FLAG_KEEP_CLEAR", "flagKeepClear", "ELEMENT scatter with FLAG_OWNER: the update that owns its target clears its owner word, which the backend keeps clear between calls"),
			c("FLAG_HOT", "flagHot", "atomic reductions: each workgroup folds the updates of its tile's hot targets in workgroup memory first (scatterHot)"),
			c("FLAG_COUNT_ATOMICS", "flagCountAtomics", "atomic reductions: count each global atomic in T_COUNT, a word per output element (Options.CountAtomics)"),
			c("FLAG_SKIP_BAD", "flagSkipBad", "a call on a caller's tensor with SkipBadIndices: a bad index skips its updates and the others go on (errorSet is false; resolve writes NO_ROW for it; a CACHE scatter checks its linear write indices)"),
		),
	},
	{
		doc: "The parameter array of BLOCK and ELEMENT plans (uint64 words). An\n" +
			"update position u splits as u = (o*J + j)*Inner + k; it lands on\n" +
			"o*OSTRIDE + v*VSTRIDE + k*ISTRIDE, v being its normalised index (the\n" +
			"row of a tuple for BLOCK). ELEMENT plans whose outer or inner index\n" +
			"space does not collapse to one dimension (FLAG_MAPS) map o and k\n" +
			"through lists of (size, magic, stride) triples instead. CACHE plans\n" +
			"read J (sequence_length), INNER, ROWS (max_sequence_length),\n" +
			"OUTPUTS, and in VSTRIDE the prefixes o per batch entry, with its\n" +
			"fast-division constant in ISTRIDE: update (o, j, k) lands on\n" +
			"(o*ROWS + position)*INNER + k.",
		pkg: "gpu",
		consts: seq(0,
			c("P_J", "pJ", "the j extent"),
			c("P_MAGIC_J", "pMagicJ", "fast-division constant for J (see udiv)"),
			c("P_INNER", "pInner", "the k extent"),
			c("P_MAGIC_INNER", "pMagicInner", ""),
			c("P_VSTRIDE", "pVStride", ""),
			c("P_OSTRIDE", "pOStride", ""),
			c("P_ISTRIDE", "pIStride", ""),
			c("P_ROWS", "pRows", "BLOCK: rows the tuples address; ELEMENT: the axis size"),
			c("P_MAGIC_ROWS", "pMagicRows", ""),
			c("P_OUTPUTS", "pOutputs", "output units"),
			c("P_TUPLE", "pTuple", "BLOCK: components per index tuple (k of ND); CACHE: the batch entries"),
			c("P_TUPLE_AT", "pTupleAt", "BLOCK: where the k dimension sizes start"),
			c("P_NOUTER", "pNOuter", "FLAG_MAPS: dimensions of the outer map"),
			c("P_NINNER", "pNInner", "FLAG_MAPS: dimensions of the inner map"),
			c("P_MAPS_AT", "pMapsAt", "FLAG_MAPS: the outer map's triples, then the inner map's"),
			c("P_XT", "pXT", "FLAG_XTABLES: where the byte offsets of the chunk tables of T_ACC ... are listed"),
			c("", "paramHeader", "first word after the fixed header"),
		),
	},
	{
		doc: "The parameter array of SLICE plans: update position u lands on\n" +
			"BASE + sum of its coordinates times the strides, over NDIMS dimensions\n" +
			"listed innermost first as (size, magic, stride) triples from DIMS_AT.",
		pkg: "gpu",
		consts: seq(0,
			c("S_NDIMS", "sNDims", ""),
			c("S_BASE", "sBase", ""),
			c("S_DIMS_AT", "sDimsAt", ""),
		),
	},
	{
		doc: "The number of leading parameter words also pushed as 32-bit push\n" +
			"constants (Push.hot), for kernels with 32-bit positions.",
		pkg:    "gpu",
		consts: []abiConst{cv("HOT_WORDS", "hotWords", abiHotWords, "")},
	},
	{
		doc: "Loop bounds (shaders/doc.go lists every loop). MAX_RUN bounds\n" +
			"Push.run, the positions of an invocation's run (the host passes 1 on\n" +
			"GPUs, 16 on CPU devices). SEGMENT is the most updates one invocation\n" +
			"walks (a column, FLAG_WALK) or folds (a slot's list, the in-order\n" +
			"fold) in one pass; longer chains take further passes that carry the\n" +
			"partial result in memory. LATER_MAX is the largest J of FLAG_LATER\n" +
			"plans: each update looks at the index of the at most LATER_MAX-1\n" +
			"updates after it along the index dimension instead of claiming owner\n" +
			"words, which take 4 bytes per slot of the output. TABLE_RUN bounds\n" +
			"the positions each invocation of a FLAG_TABLE resolve takes: its one\n" +
			"workgroup resolves at most TABLE_RUN*LOCAL_SIZE positions into\n" +
			"TABLE_WORDS/2 slots (a key word and an owner word each), so that each\n" +
			"probe loop runs at most TABLE_WORDS/2 times and an invocation's at most\n" +
			"TABLE_RUN*TABLE_WORDS/2 times in all, below lavapipe's 65535. NO_ROW\n" +
			"marks the normalised index of an update that a later one overwrites.\n" +
			"SORT_RUN is the run of the radix sort's stages on every device: a\n" +
			"tile of LOCAL_SIZE*SORT_RUN items, sorted in workgroup memory.\n" +
			"BUCKET_WORDS is the workgroup memory of the bucketed fold's\n" +
			"accumulators, in 32-bit words: a bucket holds BUCKET_WORDS slots, or\n" +
			"half as many of 8-byte elements. Its passes take chunks of LOCAL_SIZE\n" +
			"items while an invocation's steps stay within SEGMENT, at most\n" +
			"2*LOCAL_SIZE a chunk. A split bucketed fold (A_BSPLIT) divides each\n" +
			"bucket by up to BUCKET_SPLIT_BITS more bits of the slot, a workgroup\n" +
			"each: at most RADIX_DIGITS << BUCKET_SPLIT_BITS workgroups.",
		pkg: "gpu", unsigned: true, limits: true,
		consts: []abiConst{
			cv("MAX_RUN", "maxRun", 64, ""),
			cv("SEGMENT", "segment", 1<<14, ""),
			cv("LATER_MAX", "laterMax", 64, ""),
			cv("TABLE_RUN", "tableRun", 13, ""),
			cv("TABLE_WORDS", "tableWords", 8192, ""),
			cv("NO_ROW", "", 0xFFFFFFFF, ""),
			cv("SORT_RUN", "sortRun", 16, ""),
			cv("BUCKET_WORDS", "bucketWords", 4096, ""),
			cv("BUCKET_SPLIT_BITS", "bucketSplitBits", 2, ""),
		},
	},
	{
		doc: "The tensors a kernel addresses, by their chunk tables. The first five\n" +
			"have their table offsets in the push constants; the reduction tensors\n" +
			"(FLAG_XTABLES), from T_ACC on, list theirs in the parameter array,\n" +
			"from word params[P_XT] on.",
		pkg: "gpu",
		consts: seq(0,
			c("T_OUT", "tOut", ""),
			c("T_UPD", "tUpd", ""),
			c("T_IDX", "tIdx", ""),
			c("T_NORM", "tNorm", "normalised indices, or targets (uint32 each)"),
			c("T_OWNER", "tOwner", "owner words, or update counts per slot (uint32 each)"),
			c("T_ACC", "tAcc", "mean: 64-bit sums of integers of 32 bits or less"),
			c("T_K1", "tK1", "sort: keys and values, two ping-pong pairs"),
			c("T_V1", "tV1", ""),
			c("T_K2", "tK2", ""),
			c("T_V2", "tV2", ""),
			c("T_HIST", "tHist", "sort: digit counts per tile"),
			c("T_SCAN", "tScan", "scan: block sums of every level"),
			c("T_LIST", "tList", "fold: the count, then the slots, of slots with more than SEGMENT updates"),
			c("T_COUNT", "tCount", "FLAG_COUNT_ATOMICS: the global atomics issued on each output element (uint32 each)"),
			c("NUM_TENSORS", "numTensors", ""),
		),
	},
	{
		doc:      "No tensor (arguments of reduce.comp and sort.comp).",
		pkg:      "gpu",
		unsigned: true, hex: true,
		consts: []abiConst{cv("T_NONE", "tNone", 0xFFFFFFFF, "")},
	},
	{
		doc:      "The error word's value when every index is in range; resolve.comp\n" + "lowers it to the first bad position (shifted right by Push.errShift).",
		pkg:      "gpu",
		unsigned: true, hex: true,
		consts: []abiConst{cv("NO_ERROR", "noError", 0xFFFFFFFF, "")},
	},
	{
		doc: "reduce.comp's arguments, in the push constants' hot words.",
		pkg: "gpu",
		consts: seq(0,
			c("A_PHASE", "argPhase", ""),
			c("A_INNER_LO", "argInnerLo", "fold: elements per slot"),
			c("A_INNER_HI", "argInnerHi", ""),
			c("A_PERM", "argPerm", "fold: tensor of sorted positions; T_NONE: in order"),
			c("A_SEG", "argSeg", "fold: the segment of every slot's list this pass folds"),
			c("A_LIST", "argList", "fold: the tensor of slots with more than one segment, or T_NONE"),
			c("A_VALS", "argVals", "fold: the tensor of the sorted update values (slots of one element), or T_NONE"),
			c("A_BKEYS", "argBKeys", "bucketed fold: the tensor of the sorted slots"),
			c("A_BTILES", "argBTiles", "bucketed fold: the sort's tiles (T_HIST holds RADIX_DIGITS of them, scanned)"),
			c("A_BSHIFT", "argBShift", "bucketed fold: log2 of the slots of a bucket"),
			c("A_BITEMS", "argBItems", "bucketed fold: the items sorted"),
			c("A_BSLOTS", "argBSlots", "bucketed fold: the slots"),
			c("A_BSPLIT", "argBSplit", "bucketed fold: the bits each radix digit's bucket is split by (0 to BUCKET_SPLIT_BITS)"),
		),
	},
	{
		doc: "reduce.comp's phases (argument A_PHASE).",
		pkg: "gpu", unsigned: true,
		consts: seq(1,
			c("PHASE_PREPARE", "phasePrepare", ""),
			c("PHASE_FINISH", "phaseFinish", ""),
			c("PHASE_FOLD", "phaseFold", ""),
		),
	},
	{
		doc: "sort.comp, radix stages: their arguments in the hot words.",
		pkg: "gpu",
		consts: seq(0,
			c("A_N", "argN", "items (scan: words)"),
			c("A_SHIFT", "argShift", "the digit's lowest bit"),
			c("A_TILES", "argTiles", "tiles (workgroups) over all items"),
			c("A_KIN", "argKIn", "tensor of the keys read"),
			c("A_VIN", "argVIn", "tensor of the values read; T_NONE: value = position; T_UPD: the update element"),
			c("A_KOUT", "argKOut", "tensor the keys go to; T_NONE: not written (last pass)"),
			c("A_VOUT", "argVOut", "tensor the values go to"),
			c("A_VWORDS", "argVWords", "32-bit words per value: 1, or 2 for 8-byte update elements"),
			c("A_ELEM", "argElem", "A_VIN T_UPD: bytes per update element (1, 2, 4 or 8)"),
		),
	},
	{
		doc: "sort.comp, scan stages: their arguments in the hot words (A_N: words).",
		pkg: "gpu",
		consts: seq(1,
			c("A_X", "argX", "tensor scanned"),
			c("A_XOFF", "argXOff", "its first word"),
			c("A_Y", "argY", "tensor of the block totals; T_NONE: the top level"),
			c("A_YOFF", "argYOff", ""),
		),
	},
	{
		doc: "The radix sort's digits: RADIX_BITS bits, RADIX_DIGITS buckets.",
		pkg: "gpu",
		consts: []abiConst{
			cv("RADIX_BITS", "radixBits", abiRadixBits, ""),
			cv("RADIX_DIGITS", "radixDigits", 1<<abiRadixBits, ""),
		},
	},
}

// pushField is one member of the push-constant block.
type pushField struct {
	name  string // the same in GLSL (pc.name) and Go (push.name)
	wide  bool   // uint64_t; else uint
	count int    // array length, 0 for a scalar
	doc   string
}

// abiPush is the push-constant block of every kernel: at most 128 bytes,
// the least every device offers. Member offsets follow std430; the
// generator checks them against every compiled kernel.
var abiPush = []pushField{
	{name: "params", wide: true, doc: "address of the parameter buffer"},
	{name: "base", wide: true, doc: "first position of this dispatch"},
	{name: "end", wide: true, doc: "one past the last position of this dispatch"},
	// Byte offsets, within the parameter buffer, of the chunk tables of
	// T_OUT ... T_OWNER and of the error word.
	{name: "outT", doc: "T_OUT's chunk table"},
	{name: "updT", doc: "T_UPD's chunk table"},
	{name: "idxT", doc: "T_IDX's chunk table"},
	{name: "normT", doc: "T_NORM's chunk table"},
	{name: "ownerT", doc: "T_OWNER's chunk table"},
	{name: "errAt", doc: "the error word"},
	{name: "shift", doc: "log2 of the chunk size in bytes"},
	{name: "errShift", doc: "the error word holds (first bad position) >> errShift"},
	{name: "run", doc: "consecutive positions per invocation, at most MAX_RUN"},
	{name: "hot", count: abiHotWords, doc: "the parameter array's first HOT_WORDS words (POS_BITS 32), or a kernel's arguments"},
	{name: "seg", doc: "scatter.comp FLAG_WALK: the segment of J this dispatch walks"},
}

// abiPushMax is the most bytes of push constants every device offers.
const abiPushMax = 128

// abiValue returns the value of the constant whose macro or Go name is
// name; the generator panics on a name the table lacks (a bug in it).
func abiValue(name string) uint64 {
	for _, g := range abiGroups {
		for _, k := range g.consts {
			if k.glsl == name || k.goName == name {
				return k.value
			}
		}
	}
	panic("shadergen: no ABI constant " + name)
}

// abiGroupOf returns the group whose Go type is goType.
func abiGroupOf(goType string) abiGroup {
	for _, g := range abiGroups {
		if g.goType == goType {
			return g
		}
	}
	panic("shadergen: no ABI group of type " + goType)
}

// abiName returns the lower-case name of an enumeration constant: the
// macro without its prefix, "-" for "_" (KIND_BLOCK: "block",
// STAGE_RADIX_COUNT: "radix-count").
func abiName(k abiConst) string {
	_, rest, _ := strings.Cut(k.glsl, "_")
	return strings.ReplaceAll(strings.ToLower(rest), "_", "-")
}

// pushLayout returns every field's offset and the block's size (std430:
// scalars aligned to their size, arrays of uint with stride 4).
func pushLayout() (offsets []uint32, size uint32) {
	for _, f := range abiPush {
		elem := uint32(4)
		if f.wide {
			elem = 8
		}
		size = (size + elem - 1) / elem * elem
		offsets = append(offsets, size)
		n := uint32(1)
		if f.count > 0 {
			n = uint32(f.count)
		}
		size += elem * n
	}
	return offsets, size
}

// checkABI rejects a table with a name used twice (a macro, or a Go
// constant of one package), two constants of an enumeration with one
// value, or a push block over abiPushMax bytes.
func checkABI(groups []abiGroup, fields []pushField) error {
	macros := map[string]bool{}
	goNames := map[string]bool{}
	for _, g := range groups {
		values := map[uint64]string{}
		for _, k := range g.consts {
			if k.glsl != "" {
				if macros[k.glsl] {
					return fmt.Errorf("abi: macro %s declared twice", k.glsl)
				}
				macros[k.glsl] = true
			}
			if k.goName != "" {
				if goNames[g.pkg+"."+k.goName] {
					return fmt.Errorf("abi: %s.%s declared twice", g.pkg, k.goName)
				}
				goNames[g.pkg+"."+k.goName] = true
			}
			name := k.glsl + k.goName
			if other, ok := values[k.value]; ok && !g.limits {
				return fmt.Errorf("abi: %s and %s have the same value %d", other, name, k.value)
			}
			values[k.value] = name
		}
	}
	size := uint32(0)
	for _, f := range fields {
		elem := uint32(4)
		if f.wide {
			elem = 8
		}
		size = (size+elem-1)/elem*elem + elem*uint32(max(f.count, 1))
	}
	if size > abiPushMax {
		return fmt.Errorf("abi: the push constants take %d bytes, more than the %d every device offers", size, abiPushMax)
	}
	return nil
}
