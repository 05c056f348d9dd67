//go:build cgo

package gpu

import (
	"flag"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

var seedFlag = flag.Int64("seed", 0, "seed of the randomised tests (0: a fixed default)")

func testSeed(t *testing.T, def int64) int64 {
	if *seedFlag != 0 {
		def = *seedFlag
	}
	t.Logf("seed %d (reproduce with -seed %d)", def, def)
	return def
}

// udiv32 is udiv of shaders/src/common.glsl with 32-bit positions.
func udiv32(n uint32, d, m uint64) uint32 {
	dd := uint32(d)
	if m == 0 {
		if dd == 1 {
			return n
		}
		if n >= dd {
			return 1
		}
		return 0
	}
	q := uint32((uint64(n) * uint64(uint32(m))) >> 32)
	if n-q*dd >= dd {
		return q - 1
	}
	return q
}

func TestFastDivisionMatchesDivision(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t, 1)))
	divisors := []uint64{1, 2, 3, 5, 7, 10, 15, 150, 255, 256, 257, 1000, 65535, 65536, 65537,
		1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<32 - 1, 3_000_000_000}
	for i := 0; i < 200; i++ {
		divisors = append(divisors, 1+uint64(rng.Int63n(1<<32-1)), 1+uint64(rng.Intn(5000)))
	}
	for _, d := range divisors {
		m := magic(d)
		nums := []uint32{0, 1, uint32(d - 1), uint32(d), uint32(d + 1), math.MaxUint32, math.MaxUint32 - 1, 1 << 31, 1<<31 - 1}
		for i := 0; i < 300; i++ {
			nums = append(nums, rng.Uint32(), uint32(rng.Intn(1<<20)))
		}
		for _, n := range nums {
			require.Equal(t, n/uint32(d), udiv32(n, d, m), "%d / %d (magic %d)", n, d, m)
		}
	}
}

func TestSplitDispatchCoversEveryPositionOnce(t *testing.T) {
	lavapipe := [3]uint32{65535, 65535, 65535}
	cases := []struct {
		n          uint64
		local, run uint32
		max        [3]uint32
	}{
		{1, 256, 1, lavapipe},
		{256, 256, 1, lavapipe},
		{257, 256, 1, lavapipe},
		{375_000_000, 256, 1, lavapipe},
		{375_000_000, 256, 16, lavapipe},
		{1000, 4, 1, [3]uint32{7, 5, 3}}, // 2-D and 3-D grids, several dispatches
		{1000, 4, 3, [3]uint32{7, 5, 3}},
		{5000, 3, 1, [3]uint32{2, 2, 2}}, // many dispatches
		{1 << 33, 256, 1, lavapipe},
		{1 << 33, 256, 16, lavapipe},
		{3 << 31, 256, 1, [3]uint32{1 << 31, 65535, 65535}},
	}
	for _, c := range cases {
		ds := splitDispatch(c.n, c.local, c.run, c.max)
		require.NotEmpty(t, ds)
		next := uint64(0)
		for _, d := range ds {
			assert.Equal(t, next, d.base, "dispatches are contiguous")
			assert.Greater(t, d.end, d.base)
			assert.LessOrEqual(t, d.end-d.base, uint64(maxPerDispatch))
			invocations := uint64(c.local)
			for i, g := range d.groups {
				assert.LessOrEqual(t, g, c.max[i], "dimension %d within the device limit", i)
				assert.GreaterOrEqual(t, g, uint32(1))
				invocations *= uint64(g)
			}
			assert.GreaterOrEqual(t, invocations*uint64(c.run), d.end-d.base, "the grid covers the dispatch")
			assert.Less(t, invocations*uint64(c.run), uint64(1)<<32, "offsets within a dispatch stay in 32 bits")
			next = d.end
		}
		assert.Equal(t, c.n, next, "n=%d", c.n)
	}
	assert.Empty(t, splitDispatch(0, 256, 1, lavapipe))
}

func TestChunkSizes(t *testing.T) {
	assert.Equal(t, uint(31), chunkShift(1<<31))
	assert.Equal(t, uint(12), chunkShift(4096))
	assert.Equal(t, uint(12), chunkShift(5000))
	assert.Equal(t, uint(4), chunkShift(3))
	assert.Empty(t, chunkSizes(0, 12))
	assert.Equal(t, []uint64{4096, 4096, 10}, chunkSizes(8202, 12))
	assert.Equal(t, []uint64{100}, chunkSizes(100, 12))
	for n := uint64(1); n < 1<<20; n = n*3/2 + 1 {
		a := allocSize(n, 31)
		assert.GreaterOrEqual(t, a, n)
		assert.Zero(t, a%16)
		if n > minBuffer {
			assert.LessOrEqual(t, a, n+n/8+16, "size classes waste at most 1/8")
		}
	}
	assert.Equal(t, uint64(4096), allocSize(4000, 12))
	assert.Equal(t, uint64(16), allocSize(3, 4))
}

func TestCollapseMergesContiguousDimensions(t *testing.T) {
	// data [2,3,4] strides [12,4,1]: the whole index space is one run.
	assert.Equal(t, []dim{{24, 1}}, collapse([]dim{{2, 12}, {3, 4}, {4, 1}}))
	// indices [2,2,4] into data [2,3,4]: dimension 1 is cut short.
	assert.Equal(t, []dim{{8, 1}, {2, 12}}, collapse([]dim{{2, 12}, {2, 4}, {4, 1}}))
	// size-1 dimensions vanish; negative strides merge too.
	assert.Equal(t, []dim{{6, -2}}, collapse([]dim{{1, 99}, {2, -6}, {3, -2}}))
	assert.Empty(t, collapse(nil))
}

// emulate runs j's kernels on the host the way the shaders do, word for
// word: resolve (range checks, normalisation, owner claims), then scatter.
// It returns the error word and writes the result into out.
func emulate(t *testing.T, j *job, p *ops.Plan, out *tensor.Tensor) uint32 {
	errWord := uint32(noError)
	norm := make([]uint32, j.resolve)
	owner := make([]uint32, j.owners)
	param := func(i uint64) uint64 {
		if j.posBits == 32 && i < hotWords {
			return uint64(j.hot()[i]) // the push-constant copy
		}
		return j.params[i]
	}
	udiv := func(n, d, m uint64) uint64 {
		if j.posBits == 64 {
			return n / d
		}
		return uint64(udiv32(uint32(n), d, m))
	}
	wrap := func(x uint64) uint64 {
		if j.posBits == 32 {
			return uint64(uint32(x))
		}
		return x
	}
	affine := func(x uint64, n, at uint64) uint64 {
		var acc uint64
		for i := uint64(0); i+1 < n; i++ {
			tt := at + 3*i
			q := udiv(x, param(tt), param(tt+1))
			acc = wrap(acc + wrap((x-q*param(tt))*param(tt+2)))
			x = q
		}
		if n > 0 {
			acc = wrap(acc + wrap(x*param(at+3*(n-1)+2)))
		}
		return acc
	}
	split := func(u uint64) (o, jj, k uint64) {
		r := udiv(u, param(pInner), param(pMagicInner))
		k = u - r*param(pInner)
		o = udiv(r, param(pJ), param(pMagicJ))
		return o, r - o*param(pJ), k
	}
	target := func(o, k uint64, v uint32) uint64 {
		t := wrap(uint64(v) * param(pVStride))
		if j.flags&flagMaps != 0 {
			n, at := param(pNOuter), param(pMapsAt)
			return wrap(t + affine(o, n, at) + affine(k, param(pNInner), at+3*n))
		}
		return wrap(t + wrap(o*param(pOStride)) + wrap(k*param(pIStride)))
	}
	check := func(pos uint64, s int64) (int64, bool) {
		v, exact := p.Indices.IntAt(int(pos))
		lo := int64(0)
		if j.flags&flagNegative != 0 {
			lo = -s
		}
		if !exact || v < lo || v >= s {
			errWord = min(errWord, uint32(pos>>j.errShift))
			return 0, false
		}
		if v < 0 {
			v += s
		}
		return v, true
	}
	for r := uint64(0); r < j.resolve; r++ {
		switch j.kind {
		case shaders.Block:
			k, at := param(pTuple), param(pTupleAt)
			row, ok := uint64(0), true
			for c := uint64(0); c < k && ok; c++ {
				s := int64(param(at + c))
				var v int64
				v, ok = check(r*k+c, s)
				row = row*uint64(s) + uint64(v)
			}
			if !ok {
				continue
			}
			norm[r] = uint32(row)
			if j.flags&flagOwner != 0 {
				owner[row] = max(owner[row], uint32(r)+1)
			}
		case shaders.Element:
			v, ok := check(r, int64(param(pRows)))
			if !ok {
				continue
			}
			norm[r] = uint32(v)
			if j.flags&flagOwner != 0 {
				o, jj, k := split(r)
				tg := target(o, k, uint32(v))
				owner[tg] = max(owner[tg], uint32(jj)+1)
			}
		}
	}
	// writeIndex and cacheStart are scatter.comp's (KIND_CACHE).
	writeIndex := func(b uint64) int64 { v, _ := p.Indices.IntAt(int(b)); return v }
	cacheStart := func(b uint64) uint64 {
		switch {
		case j.flags&flagZeroStart != 0:
			return 0
		case j.flags&flagCircular == 0:
			return uint64(writeIndex(b))
		}
		w, m := writeIndex(b), param(pRows)
		if w >= 0 {
			return uint64(w) % m
		}
		a := uint64(-(w + 1)) + 1
		return (m - a%m) % m
	}
	if j.kind == shaders.Cache && (j.checks > 0 || j.flags&flagCheckAll != 0) {
		// The check pass (resolve.comp), or the scatter's own check.
		hi := int64(param(pRows) - param(pJ))
		for b := uint64(0); b < param(pTuple); b++ {
			if w := writeIndex(b); w < 0 || w > hi {
				errWord = min(errWord, uint32(b>>j.errShift))
				break
			}
		}
	}
	if errWord != noError {
		return errWord
	}
	// move copies unit u of updates onto unit tg of out (a unit is one or
	// several elements; strings move as handles, so units of them too).
	es := uint64(j.elemBytes)
	move := func(tg, u uint64) {
		if p.DType == tensor.String {
			vw := es / 4
			copy(out.Strings[tg*vw:(tg+1)*vw], p.Updates.Strings[u*vw:(u+1)*vw])
			return
		}
		copy(out.Data[tg*es:(tg+1)*es], p.Updates.Data[u*es:(u+1)*es])
	}
	if j.gather {
		// gather.comp, element by element (the word grouping of small
		// elements changes no value).
		for tg := uint64(0); tg < j.outputs; tg++ {
			r := udiv(tg, param(pInner), param(pMagicInner))
			k := tg - r*param(pInner)
			o := udiv(r, param(pRows), param(pMagicRows))
			v := r - o*param(pRows)
			w := owner[v]
			if w == 0 {
				continue
			}
			u := (o*param(pJ)+uint64(w-1))*param(pInner) + k
			require.Less(t, u, j.updates)
			move(tg, u)
		}
		return errWord
	}
	// laterWins is shaders/src/common.glsl's.
	laterWins := func(jj, at, step uint64, v uint32) bool {
		for i := jj + 1; i < min(param(pJ), laterMax); i++ {
			if norm[at] == v {
				return true
			}
			at += step
		}
		return false
	}
	for u := uint64(0); u < j.updates; u++ {
		var tg uint64
		switch j.kind {
		case shaders.Slice:
			tg = wrap(param(sBase) + affine(u, param(sNDims), sDimsAt))
		case shaders.Block:
			o, jj, k := split(u)
			v := norm[jj]
			if j.flags&flagOwner != 0 && owner[v] != uint32(jj)+1 {
				continue
			}
			if j.flags&flagLater != 0 && laterWins(jj, jj+1, 1, v) {
				continue
			}
			tg = target(o, k, v)
		case shaders.Element:
			o, jj, k := split(u)
			tg = target(o, k, norm[u])
			if j.flags&flagOwner != 0 && owner[tg] != uint32(jj)+1 {
				continue
			}
			if j.flags&flagLater != 0 && laterWins(jj, u+param(pInner), param(pInner), norm[u]) {
				continue
			}
		case shaders.Cache:
			o, jj, k := split(u)
			m := param(pRows)
			pos := cacheStart(udiv(o, param(pVStride), param(pIStride))) + jj
			if pos >= m {
				pos -= m
			}
			tg = wrap((o*m+pos)*param(pInner) + k)
		}
		require.Less(t, tg, j.outputs, "target in range")
		require.Less(t, u, j.updates)
		move(tg, u)
	}
	return errWord
}

// TestJobMatchesNaive runs the kernels' arithmetic on the host for random
// requests (reduction none) with 32- and 64-bit positions and requires
// Naive's result or its error.
func TestJobMatchesNaive(t *testing.T) {
	seed := testSeed(t, 7)
	rng := rand.New(rand.NewSource(seed))
	var errs, wides, oks, gathers, widened, maps int
	for i := 0; i < 3000; i++ {
		req := opstest.RandomRequest(rng, opstest.Config{})
		req.Reduction, req.UseInitVal = "", nil
		bad := false
		if req.Indices != nil && req.Indices.Len() > 0 && rng.Intn(4) == 0 {
			// Put one index far out of range (every dtype holds 100 or 127).
			pos := rng.Intn(req.Indices.Len())
			setRaw(req.Indices, pos, 100+uint64(rng.Intn(27)))
			bad = true
		}
		want, werr := opstest.Naive(req)
		p, err := ops.Prepare(req)
		require.NoError(t, err, "case %d: %s", i, opstest.Describe(req))
		for _, wide := range []bool{false, true} {
			j, err := newJob(p)
			require.NoError(t, err)
			if wide {
				j.posBits = 64
			}
			out := p.Data.Clone()
			w := emulate(t, j, p, out)
			if werr != nil {
				errs++
				require.NotEqual(t, uint32(noError), w, "case %d: the kernels miss the bad index: %s", i, opstest.Describe(req))
				assert.Equal(t, werr.Error(), badIndex(p, w, j.errShift).Error(), "case %d", i)
				continue
			}
			require.Equal(t, uint32(noError), w, "case %d (bad=%v): %s", i, bad, opstest.Describe(req))
			if d := opstest.Diff(out, want); d != "" {
				t.Fatalf("case %d (wide=%v): %s\n%s", i, wide, d, opstest.Describe(req))
			}
			oks++
			if j.gather {
				gathers++
			}
			if j.elemBytes != p.DType.Size() {
				widened++
			}
			if j.flags&flagMaps != 0 {
				maps++
			}
			if j.posBits == 64 {
				wides++
			}
		}
	}
	t.Logf("%d results and %d index errors checked, %d with 64-bit positions, %d gathers, %d in units of several elements, %d with index maps",
		oks, errs, wides, gathers, widened, maps)
	assert.Greater(t, maps, 100)
	assert.Greater(t, gathers, 100)
	assert.Greater(t, widened, 500)
	assert.Greater(t, errs, 300)
	assert.Greater(t, oks, 3000)
}

// setRaw stores v into element i of an integer tensor.
func setRaw(x *tensor.Tensor, i int, v uint64) {
	n := x.DType.Size()
	for b := 0; b < n; b++ {
		x.Data[i*n+b] = byte(v >> (8 * b))
	}
}

func TestBadIndexShiftFindsTheFirst(t *testing.T) {
	idx := tensor.MustFromSlice([]int{10}, []int32{0, 1, 2, 9, 1, 2, 7, 0, 0, 0})
	req := ops.Request{Op: "ScatterElements-11", Data: tensor.MustFromSlice([]int{5}, []float32{1, 2, 3, 4, 5}),
		Indices: idx, Updates: tensor.MustFromSlice([]int{10}, make([]float32, 10))}
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	_, want := p.IndexAt(3)
	require.Error(t, want)
	for shift := uint32(0); shift < 4; shift++ {
		// The kernels report min over bad positions of pos >> shift.
		got := badIndex(p, 3>>shift, shift)
		assert.Equal(t, want.Error(), got.Error(), "shift %d", shift)
	}
	assert.ErrorIs(t, badIndex(p, 0, 1), ops.ErrDeviceLost, "a word with no bad index behind it is a device fault")
}

// TestNewJobReductionsMoveElements: a reduction folds element by element,
// so its job moves single elements (no units of several) and claims no
// owner words, whatever the shapes allow for reduction none.
func TestNewJobReductionsMoveElements(t *testing.T) {
	data, _ := tensor.New(tensor.Float32, []int{4, 8})
	req := ops.Request{Op: "ScatterND-16", Data: data, Indices: tensor.MustFromSlice([]int{3, 1}, []int64{1, 1, 3}),
		Updates: randomFloats(rand.New(rand.NewSource(1)), []int{3, 8})}
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	j, err := newJob(p)
	require.NoError(t, err)
	assert.Greater(t, j.elemBytes, 4, "reduction none moves 8 floats as units of 16 bytes")
	assert.NotZero(t, j.flags&flagLater, "three index tuples look at the later ones")

	req.Reduction = "add"
	p, err = ops.Prepare(req)
	require.NoError(t, err)
	j, err = newJob(p)
	require.NoError(t, err)
	assert.Equal(t, 4, j.elemBytes)
	assert.Equal(t, uint64(24), j.updates)
	assert.Zero(t, j.owners)
	assert.Zero(t, j.flags&flagOwner)
	assert.False(t, j.gather)
}
