package bench

import (
	"fmt"
	"math"
	"sort"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// The inputs are a pure function of (seed, stream, position): element i of
// a stream is a hash of the three, so chunks fill in parallel and the
// result never depends on the number of goroutines or their order.

// Streams keep the inputs of one workload independent of each other.
const (
	streamData uint64 = iota + 1
	streamUpdates
	streamIndices
)

// mix is the SplitMix64 finaliser: a bijection of 64-bit words whose output
// bits each depend on every input bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// key returns the base of a stream's hashes.
func key(seed, stream uint64) uint64 {
	return mix(mix(seed+0x9e3779b97f4a7c15) ^ stream*0xd1b54a32d192ed03)
}

// at returns the hash of position i of the stream with base k.
func at(k uint64, i int) uint64 { return mix(k + uint64(i)*0x9e3779b97f4a7c15) }

// below maps a hash to [0, n) without division (Lemire's multiply-shift);
// n is at most 2^32, where the bias is below 2^-32.
func below(h uint64, n uint64) uint64 {
	return (h >> 32) * n >> 32
}

// unit maps a hash to a float32 in [-1, 1) with 24 significant bits, so
// that every value is exact in float32 and its sign is random.
func unit(h uint64) float32 {
	return float32(int32(h>>32)>>7) / (1 << 24)
}

// genChunk is the number of elements one task fills.
const genChunk = 1 << 16

// fill calls f(lo, hi) over [0, n) in chunks spread over GOMAXPROCS
// goroutines.
func fill(n int, f func(lo, hi int)) {
	parallel((n+genChunk-1)/genChunk, func(c int) {
		f(c*genChunk, min(n, (c+1)*genChunk))
	})
}

// randomValues returns a tensor of dt and shape holding values drawn from
// the stream (seed, stream): floats in [-1, 1), integers over their whole
// range. It supports the dtypes the built-in workloads use.
func randomValues(dt tensor.DType, shape []int, seed, stream uint64) (*tensor.Tensor, error) {
	t, err := tensor.New(dt, shape)
	if err != nil {
		return nil, err
	}
	k := key(seed, stream)
	switch dt {
	case tensor.Float32:
		v := tensor.View[float32](t)
		fill(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = unit(at(k, i))
			}
		})
	case tensor.Float64:
		v := tensor.View[float64](t)
		fill(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = float64(unit(at(k, i)))
			}
		})
	case tensor.Float16:
		v := tensor.View[tensor.F16](t)
		fill(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = tensor.F16From(unit(at(k, i)))
			}
		})
	case tensor.BFloat16:
		v := tensor.View[tensor.BF16](t)
		fill(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = tensor.BF16From(unit(at(k, i)))
			}
		})
	case tensor.Int32:
		v := tensor.View[int32](t)
		fill(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = int32(at(k, i))
			}
		})
	case tensor.Int64:
		v := tensor.View[int64](t)
		fill(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = int64(at(k, i))
			}
		})
	default:
		return nil, fmt.Errorf("bench: no generator for %v values", dt)
	}
	return t, nil
}

// randomIndices returns an int64 tensor of shape whose element at flat
// position i is uniform in [0, bound(i % period)): period is the length of
// an index tuple (1 for plain indices) and bound gives each component's
// range, at most 2^32.
func randomIndices(shape []int, bounds []int, seed uint64) (*tensor.Tensor, error) {
	t, err := tensor.New(tensor.Int64, shape)
	if err != nil {
		return nil, err
	}
	for _, b := range bounds {
		if b <= 0 || b > math.MaxUint32 {
			return nil, fmt.Errorf("bench: index bound %d is outside [1, 2^32]", b)
		}
	}
	k := key(seed, streamIndices)
	v := tensor.View[int64](t)
	period := len(bounds)
	fill(len(v), func(lo, hi int) {
		if period == 1 {
			n := uint64(bounds[0])
			for i := lo; i < hi; i++ {
				v[i] = int64(below(at(k, i), n))
			}
			return
		}
		for i := lo; i < hi; i++ {
			v[i] = int64(below(at(k, i), uint64(bounds[i%period])))
		}
	})
	return t, nil
}

// streamRanks is the stream of the permutation that places a Zipf law's
// ranks on the elements (zipfIndices).
const streamRanks = streamIndices + 16

// zipfIndices returns an int64 tensor of shape whose elements follow a
// bounded Zipf law over [0, n): rank r (1-based) comes with probability
// proportional to r^-s, and the ranks are placed on the elements by a
// permutation drawn from seed, so that the hottest target is element
// perm[0], not 0. Each element is the inverse of the law's distribution
// function at a uniform hash of its position (a pure function of seed and
// position, as every input is).
func zipfIndices(shape []int, n int, s float64, seed uint64) (*tensor.Tensor, error) {
	if n <= 0 || n > math.MaxUint32 {
		return nil, fmt.Errorf("bench: index bound %d is outside [1, 2^32]", n)
	}
	t, err := tensor.New(tensor.Int64, shape)
	if err != nil {
		return nil, err
	}
	cdf := make([]float64, n)
	var sum float64
	for r := range cdf {
		sum += math.Pow(float64(r+1), -s)
		cdf[r] = sum
	}
	for r := range cdf {
		cdf[r] /= sum
	}
	cdf[n-1] = 1
	perm := make([]int64, n)
	for i := range perm {
		perm[i] = int64(i)
	}
	kp := key(seed, streamRanks)
	for i := n - 1; i > 0; i-- {
		j := below(at(kp, i), uint64(i+1))
		perm[i], perm[j] = perm[j], perm[i]
	}
	k := key(seed, streamIndices)
	v := tensor.View[int64](t)
	fill(len(v), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			u := float64(at(k, i)>>11) / (1 << 53)
			v[i] = perm[min(sort.SearchFloat64s(cdf, u), n-1)]
		}
	})
	return t, nil
}
