package cpuref

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestSIMDStageLayout pins the offsets binsimd_amd64.s uses.
func TestSIMDStageLayout(t *testing.T) {
	var s binStage
	// binsimd_amd64.s: NBINS is maxBins, RSZ the bytes of a stage row and
	// RU the offset of its updates.
	const nbins, rsz = maxBins, 1152
	tb := uintptr(nbins*rsz + 16*nbins)
	want := []struct {
		name string
		got  uintptr
		off  uintptr
	}{
		{"rows", unsafe.Offsetof(s.rows), 0},
		{"row size", unsafe.Sizeof(s.rows[0]), rsz},
		{"row updates", unsafe.Offsetof(s.rows[0].u), 384},
		{"cnt", unsafe.Offsetof(s.cnt), nbins * rsz},
		{"pos", unsafe.Offsetof(s.pos), nbins*rsz + 8*nbins},
		{"tb", unsafe.Offsetof(s.tb), tb},
		{"ub", unsafe.Offsetof(s.ub), tb + 8},
		{"nxt", unsafe.Offsetof(s.nxt), tb + 16},
		{"blk", unsafe.Offsetof(s.blk), tb + 24},
		{"bb", unsafe.Offsetof(s.bb), tb + 32},
		{"s", unsafe.Offsetof(s.s), tb + 40},
		{"add", unsafe.Offsetof(s.add), tb + 48},
		{"mul", unsafe.Offsetof(s.mul), tb + 56},
		{"shift", unsafe.Offsetof(s.shift), tb + 64},
		{"flags", unsafe.Offsetof(s.flags), tb + 72},
		{"esize", unsafe.Offsetof(s.esize), tb + 80},
	}
	for _, w := range want {
		require.Equal(t, w.off, w.got, "offset of binStage.%s", w.name)
	}
	if runtime.GOARCH != "amd64" {
		return // no assembly here
	}
	nb, row, ru, cnt, tbOff, es := stageLayout()
	require.Equal(t, []int{maxBins, rsz, 384, nbins * rsz, int(tb), int(tb) + 80}, []int{nb, row, ru, cnt, tbOff, es},
		"binsimd_amd64.s's NBINS, RSZ, RU, STAGE_CNT, STAGE_TB, STAGE_ESIZE")
}

// TestSIMDPartitionMatchesScalar runs binned scatters with the assembly
// partition loops (vector, and scalar alone, each also in rounds) and with
// the Go loops and wants the same bits or the same error: elements of 1,
// 2, 4 and 8 bytes, int32 and int64 indices, negative indices allowed or
// not, 1 to 63 bins, blocks of 64 entries and more, counts that leave a
// tail of fewer than 16, and bad indices at every lane of a group and in
// the tail.
func TestSIMDPartitionMatchesScalar(t *testing.T) {
	if !haveKeys {
		t.Log("no assembly partition on this processor: the Go loops run, and TestSplitsKeepIndexOrder covers them")
		return
	}
	seed := int64(20261125)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	// The assembly loops, the scalar one alone (as without AVX-512), and
	// the Go loops.
	backends := func(bin, block int) (simd, keys, rounds, keysRounds, scalar *Backend) {
		g := grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceBinned, bin: bin, binBlock: block, binWC: 1 << 30}
		k := g
		k.binNoVector = true
		r := g
		r.binRound, r.binRoundOut = 1000, 1<<40 // rows flushed with plain stores
		kr := r
		kr.binNoVector = true
		h := g
		h.binNoAsm = true
		return &Backend{Workers: 3, grain: &g}, &Backend{Workers: 3, grain: &k}, &Backend{Workers: 3, grain: &r},
			&Backend{Workers: 3, grain: &kr}, &Backend{Workers: 3, grain: &h}
	}
	// The index values: in range, negative, or (bad) the given value.
	indices := func(dt tensor.DType, n, s int, neg bool) *tensor.Tensor {
		x, err := tensor.New(dt, []int{n})
		require.NoError(t, err)
		for i := range n {
			v := int64(rng.Intn(s))
			if neg && rng.Intn(3) == 0 {
				v -= int64(s)
			}
			switch dt {
			case tensor.Int32:
				tensor.View[int32](x)[i] = int32(v)
			default:
				tensor.View[int64](x)[i] = v
			}
		}
		return x
	}
	set := func(x *tensor.Tensor, i int, v int64) {
		if x.DType == tensor.Int32 {
			tensor.View[int32](x)[i] = int32(v)
		} else {
			tensor.View[int64](x)[i] = v
		}
	}
	cases := 0
	for _, op := range []string{"ScatterElements-18", "ScatterND-18", "ScatterNDUpdate-3"} {
		neg := op != "ScatterNDUpdate-3"
		for _, idt := range []tensor.DType{tensor.Int32, tensor.Int64} {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32, tensor.Uint32, tensor.Float64, tensor.Int64, tensor.Float16, tensor.Int8} {
				for _, red := range []string{"", "add", "max", "min"} {
					if op == "ScatterNDUpdate-3" && red != "" {
						continue
					}
					// bin is the grain's bin in bytes of float32; the plans
					// take 16, 63, 29, 25, 7, 4 and 2 bins of a 1-D output, 38
					// and 4 bins of columns along axis 0, and the last
					// decodes in Go (8 columns) and partitions in assembly.
					for _, shape := range []struct{ s, inner, bin, block, n int }{
						{1000, 1, 64 << 2, 6, 4096 + 5},
						{1000, 1, 64, 7, 3000},
						{900, 1, 128, 6, 2017},
						{100, 1, 16, 12, 16*37 + 15},
						{50, 1, 1 << 20, 6, 33},
						{4, 1, 16, 6, 16*23 + 9},
						{2, 1, 16, 7, 100},
						{300, 32, 1024, 6, 32 * 97},
						{200, 16, 4096, 7, 16 * 131},
						{100, 8, 256, 6, 8 * 301},
					} {
						s, n := shape.s, shape.n
						if shape.inner > 1 && op != "ScatterElements-18" {
							continue
						}
						dshape := []int{s}
						ishape := []int{n}
						switch {
						case shape.inner > 1:
							dshape = []int{s, shape.inner}
							ishape = []int{n / shape.inner, shape.inner}
						case op != "ScatterElements-18":
							ishape = []int{n, 1}
						}
						data := orderTensor(rng, dt, dshape, dt == tensor.Float32)
						ushape := ishape // ScatterElements: the shape of indices
						if op != "ScatterElements-18" {
							ushape = []int{n}
						}
						upd := orderTensor(rng, dt, ushape, dt == tensor.Float32)
						ix := indices(idt, n, s, neg)
						ix.Shape = ishape
						simd, keys, rounds, keysRounds, scalar := backends(shape.bin*dt.Size()/4, shape.block)
						run := func(name string, ix *tensor.Tensor) {
							req := ops.Request{Op: op, Reduction: red, Data: data, Indices: ix, Updates: upd}
							cases++
							p, err := ops.Prepare(req)
							require.NoError(t, err, name)
							want, err := tensor.New(p.DType, p.Shape)
							require.NoError(t, err)
							wantErr := scalar.Execute(context.Background(), p, want)
							for _, be := range []struct {
								name string
								b    *Backend
							}{{"vector", simd}, {"scalar-asm", keys}, {"rounds", rounds}, {"scalar-asm-rounds", keysRounds}} {
								got, err := tensor.New(p.DType, p.Shape)
								require.NoError(t, err)
								err = be.b.Execute(context.Background(), p, got)
								if wantErr != nil {
									require.Error(t, err, "%s %s", be.name, name)
									require.Equal(t, wantErr.Error(), err.Error(), "%s %s", be.name, name)
									continue
								}
								require.NoError(t, err, "%s %s", be.name, name)
								if d := opstest.DiffExact(got, want); d != "" {
									t.Fatalf("%s %s (seed %d): %s", be.name, name, seed, d)
								}
							}
						}
						name := fmt.Sprintf("%s/%v/%v/%s/s%d-inner%d-bin%d-block%d-n%d", op, idt, dt, red, s, shape.inner, shape.bin, shape.block, n)
						run(name, ix)
						// A bad value at a lane of a group, in the tail, and
						// two in one group (the first must be named).
						for _, at := range []int{0, 15, 16 + 7, n - 1, n / 2} {
							// 1<<32+3 and 3-1<<32 have a low half in range.
							for _, v := range []int64{int64(s), -int64(s) - 1, 1 << 40, -1, 1<<32 + 3, 3 - 1<<32, math.MinInt64, math.MaxInt64} {
								if v == -1 && neg {
									continue
								}
								if idt == tensor.Int32 && (v > math.MaxInt32 || v < math.MinInt32) {
									v = int64(int32(v>>32) | 1<<30) // out of range but for -1
								}
								bad := ix.Clone()
								set(bad, at, v)
								if at+3 < n {
									set(bad, at+3, int64(s)+5)
								}
								run(fmt.Sprintf("%s/bad%d@%d", name, v, at), bad)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestBinPartition calls the vector loop directly: it must take every
// whole group of 16 before the first bad index, and leave in the rows and
// lists exactly the entries of those units, bin by bin in order.
func TestBinPartition(t *testing.T) {
	if !haveSIMD {
		t.Log("no AVX-512 here: binPartition is not used")
		return
	}
	rng := rand.New(rand.NewSource(11))
	for _, flags := range []int64{0, 1, 2, 3, 4, 6} {
		for _, n := range []int{0, 15, 16, 17, 1000, 4096} {
			for _, badAt := range []int{-1, 0, 31, n / 2} {
				if badAt >= n {
					continue
				}
				nb := 8
				switch {
				case flags&1 != 0:
					nb = 16
				case flags&4 != 0:
					nb = 4
				}
				const s, shift, bb = 1 << 10, 6, 6 // 16 bins of 64
				var raw unsafe.Pointer
				keys := make([]int64, n)
				i32 := make([]int32, n+1)
				i64 := make([]int64, n+1)
				for i := range keys {
					keys[i] = int64(rng.Intn(nb << shift))
					if rng.Intn(2) == 0 {
						keys[i] -= s // negative: counts from the end
					}
					if i == badAt {
						keys[i] = s
					}
					i32[i], i64[i] = int32(keys[i]), keys[i]
				}
				if flags&2 != 0 {
					raw = unsafe.Pointer(&i32[0])
				} else {
					raw = unsafe.Pointer(&i64[0])
				}
				u := make([]uint32, n+1)
				for i := range u {
					u[i] = rng.Uint32()
				}
				blocks := n/64 + 2*nb + 1
				tgt := alignedU32(blocks << bb)
				upd := alignedU32(blocks << bb)
				next := make([]int32, blocks)
				st := &binStage{tb: unsafe.Pointer(&tgt[0]), ub: unsafe.Pointer(&upd[0]), nxt: unsafe.Pointer(&next[0]),
					bb: bb, s: s, add: s, mul: 1, shift: shift, flags: flags, esize: 4}
				var pos binPos
				heads := make([]int32, nb)
				for b := range nb {
					pos[b] = int32(b) << bb
					heads[b] = int32(b)
				}
				st.start(nb, &pos, int32(nb))
				done := binPartition(raw, unsafe.Pointer(&u[0]), n, st)
				want := n &^ 15
				if badAt >= 0 {
					want = badAt &^ 15
				}
				require.Equal(t, want, done, "flags %d n %d bad at %d", flags, n, badAt)
				st.drain(nb, &pos)
				for b := range nb {
					var gotT, gotU []uint32
					for blk := heads[b]; ; blk = next[blk] {
						lo := int(blk) << bb
						hi := lo + 1<<bb
						if int(pos[b]) >= lo && int(pos[b]) < hi {
							gotT = append(gotT, tgt[lo:pos[b]]...)
							gotU = append(gotU, upd[lo:pos[b]]...)
							break
						}
						gotT = append(gotT, tgt[lo:hi]...)
						gotU = append(gotU, upd[lo:hi]...)
					}
					var wantT, wantU []uint32
					for i := range done {
						k := keys[i]
						if k < 0 {
							k += s
						}
						if int(k>>shift) == b {
							wantT = append(wantT, uint32(k))
							wantU = append(wantU, u[i])
						}
					}
					require.Equal(t, wantT, gotT, "targets of bin %d (flags %d n %d bad at %d)", b, flags, n, badAt)
					require.Equal(t, wantU, gotU, "updates of bin %d", b)
				}
			}
		}
	}
}

// alignedU32 returns n uint32s aligned to a cache line.
func alignedU32(n int) []uint32 {
	s := make([]uint32, n+16)
	off := int((64 - uintptr(unsafe.Pointer(&s[0]))%64) % 64 / 4)
	return s[off : off+n]
}

// FuzzBinnedIndices feeds arbitrary index values, in range or not, to the
// binned partition loops (vector, scalar assembly, Go) and wants the same
// result or the same error from all three.
func FuzzBinnedIndices(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint16(100), true, uint8(0), uint8(16), uint8(6))
	f.Add(make([]byte, 4*70), uint16(7), false, uint8(1), uint8(1), uint8(7))
	f.Add([]byte{0, 0, 0, 0x80, 5, 0, 0, 0}, uint16(2000), false, uint8(2), uint8(200), uint8(12))
	f.Fuzz(func(t *testing.T, raw []byte, size uint16, wide bool, mode, bin, block uint8) {
		s := 1 + int(size)%4000
		isz := 4
		if wide {
			isz = 8
		}
		n := min(len(raw)/isz, 1<<12)
		op, red := []string{"ScatterElements-18", "ScatterElements-18", "ScatterNDUpdate-3"}[mode%3], []string{"add", "", ""}[mode%3]
		dt := tensor.Int32
		if wide {
			dt = tensor.Int64
		}
		shape := []int{n}
		if op != "ScatterElements-18" {
			shape = []int{n, 1}
		}
		ix, err := tensor.New(dt, shape)
		require.NoError(t, err)
		for i := range n {
			var v int64
			if wide {
				v = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			} else {
				v = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
			}
			// Mostly in range (both signs), sometimes the raw value.
			if v&0x70 != 0x70 {
				v %= int64(s)
			}
			if wide {
				tensor.View[int64](ix)[i] = v
			} else {
				tensor.View[int32](ix)[i] = int32(v)
			}
		}
		rng := rand.New(rand.NewSource(int64(n)))
		// Updates of 4, 8, 2 and 1 bytes.
		et := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Float16, tensor.Int8}[bin%4]
		req := ops.Request{Op: op, Reduction: red, Data: orderTensor(rng, et, []int{s}, et != tensor.Int8), Indices: ix,
			Updates: orderTensor(rng, et, []int{n}, et != tensor.Int8)}
		p, err := ops.Prepare(req)
		if err != nil {
			return // refused before any backend runs
		}
		g := grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceBinned, bin: 4 * (1 + int(bin)), binBlock: 6 + int(block)%7}
		var outs []*tensor.Tensor
		var errs []error
		for _, v := range []func(*grain){func(*grain) {}, func(g *grain) { g.binNoVector = true }, func(g *grain) { g.binNoAsm = true }} {
			gg := g
			v(&gg)
			out, err := tensor.New(p.DType, p.Shape)
			require.NoError(t, err)
			errs = append(errs, (&Backend{Workers: 2, grain: &gg}).Execute(context.Background(), p, out))
			outs = append(outs, out)
		}
		for i := range 2 {
			if errs[2] != nil {
				require.Error(t, errs[i])
				require.Equal(t, errs[2].Error(), errs[i].Error())
				continue
			}
			require.NoError(t, errs[i])
			if d := opstest.DiffExact(outs[i], outs[2]); d != "" {
				t.Fatal(d)
			}
		}
	})
}

// TestBinnedDefaultGrainsMatchGo runs binned scatters at sizes the
// default grains bin (outputs of 4 MiB and more, blocks of 4096 entries,
// several chunks) with the assembly loops and with the Go ones.
func TestBinnedDefaultGrainsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const mi = 1 << 20
	ix := func(dt tensor.DType, shape []int, s int, neg bool) *tensor.Tensor {
		x, err := tensor.New(dt, shape)
		require.NoError(t, err)
		for i := range x.Len() {
			v := int64(rng.Intn(s))
			if neg && i%3 == 0 {
				v -= int64(s)
			}
			if dt == tensor.Int32 {
				tensor.View[int32](x)[i] = int32(v)
			} else {
				tensor.View[int64](x)[i] = v
			}
		}
		return x
	}
	reqs := map[string]ops.Request{
		"elements-sum-f32": {Op: "ScatterElements-18", Reduction: "add",
			Data: orderTensor(rng, tensor.Float32, []int{mi}, true), Indices: ix(tensor.Int64, []int{3 * mi}, mi, true),
			Updates: orderTensor(rng, tensor.Float32, []int{3 * mi}, true)},
		"elements-axis0-none-f32": {Op: "ScatterElements-18",
			Data: orderTensor(rng, tensor.Float32, []int{512, 4096}, true), Indices: ix(tensor.Int64, []int{256, 4096}, 512, true),
			Updates: orderTensor(rng, tensor.Float32, []int{256, 4096}, true)},
		"nd-max-i32": {Op: "ScatterND-18", Reduction: "max",
			Data: orderTensor(rng, tensor.Int32, []int{4 * mi}, false), Indices: ix(tensor.Int32, []int{2 * mi, 1}, 4*mi, false),
			Updates: orderTensor(rng, tensor.Int32, []int{2 * mi}, false)},
		"elements-mul-f64": {Op: "ScatterElements-18", Reduction: "mul",
			Data: orderTensor(rng, tensor.Float64, []int{mi}, true), Indices: ix(tensor.Int64, []int{mi}, mi, true),
			Updates: orderTensor(rng, tensor.Float64, []int{mi}, true)},
	}
	g := defaultGrain
	g.binNoAsm = true
	for name, req := range reqs {
		p, err := ops.Prepare(req)
		require.NoError(t, err, name)
		got, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		want, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		require.NoError(t, New().Execute(context.Background(), p, got), name)
		require.NoError(t, (&Backend{grain: &g}).Execute(context.Background(), p, want), name)
		if d := opstest.DiffExact(got, want); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
	}
}

// TestVecFoldMatchesGo runs the vector fold (foldVec through vecFold) and
// the Go loops on the same entries and wants the same bits: every
// operation, lengths around the groups of 16, targets spread over a few
// elements (most groups repeat one, and take the one-at-a-time path) to
// many, and values that straddle the sign and the ends of the range.
func TestVecFoldMatchesGo(t *testing.T) {
	if !haveFold {
		t.Log("no vector fold on this processor: the Go loops fold, and TestSplitsKeepIndexOrder covers them")
		return
	}
	seed := int64(20261126)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	cases := []struct {
		red ops.Reduction
		dt  tensor.DType
		k   kernels[uint32, int32]
	}{
		{ops.Max, tensor.Int32, intKernels[int32, uint32, int32](ops.Max)},
		{ops.Min, tensor.Int32, intKernels[int32, uint32, int32](ops.Min)},
		{ops.Max, tensor.Uint32, intKernels[uint32, uint32, int32](ops.Max)},
		{ops.Min, tensor.Uint32, intKernels[uint32, uint32, int32](ops.Min)},
	}
	value := func() uint32 {
		switch rng.Intn(4) {
		case 0:
			return uint32(rng.Intn(5)) - 2 // around zero and the sign
		case 1:
			return 1<<31 - 2 + uint32(rng.Intn(4)) // around the largest int32
		}
		return rng.Uint32()
	}
	for _, c := range cases {
		for _, span := range []int{1, 3, 17, 100, 5000} {
			for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 16*40 + 7, 4096} {
				name := fmt.Sprintf("%v/%v/span%d/n%d", c.red, c.dt, span, n)
				x := &exec{g: defaultGrain, p: &ops.Plan{Reduction: c.red, DType: c.dt, UseInitVal: true}}
				fold := vecFold[uint32, int32](x, c.k.indexed)
				require.NotNil(t, fold, name)
				base := make([]uint32, span)
				for i := range base {
					base[i] = value()
				}
				tgt := make([]int32, n)
				upd := make([]uint32, n)
				for i := range tgt {
					tgt[i] = int32(rng.Intn(span))
					upd[i] = value()
				}
				tgt0, upd0 := slices.Clone(tgt), slices.Clone(upd)
				got, want := slices.Clone(base), slices.Clone(base)
				fold(got, tgt, upd)
				c.k.indexed(want, tgt, upd)
				require.Equal(t, want, got, "%s (seed %d)", name, seed)
				require.Equal(t, tgt0, tgt, name)
				require.Equal(t, upd0, upd, name)
			}
		}
	}
	// Switched off, and for other plans, there is no vector fold.
	for _, x := range []*exec{
		{g: grain{binNoVector: true}, p: &ops.Plan{Reduction: ops.Max, DType: tensor.Int32}},
		{g: grain{binNoAsm: true}, p: &ops.Plan{Reduction: ops.Max, DType: tensor.Int32}},
		{g: defaultGrain, p: &ops.Plan{Reduction: ops.Max, DType: tensor.Float32}},
		{g: defaultGrain, p: &ops.Plan{Reduction: ops.Sum, DType: tensor.Float32}},
		{g: defaultGrain, p: &ops.Plan{Reduction: ops.Sum, DType: tensor.Int32}},
		{g: defaultGrain, p: &ops.Plan{Reduction: ops.Max, DType: tensor.Int64}},
	} {
		require.Nil(t, vecFold[uint32, int32](x, nil), "%+v", x.g)
	}
}
