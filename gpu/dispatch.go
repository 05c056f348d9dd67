//go:build cgo

package gpu

// maxPerDispatch caps the positions of one dispatch, so that a kernel's
// linear offset within its dispatch always fits in 32 bits.
const maxPerDispatch = 1 << 31

// dispatch is one vkCmdDispatch of a kernel over positions [base, end).
type dispatch struct {
	base, end uint64
	groups    [3]uint32
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// splitDispatch covers n positions of a kernel whose workgroups have local
// invocations, each handling run consecutive positions, by dispatches whose
// group counts respect maxGroups: a 1-D grid when it fits, else 2-D, else
// 3-D, and several dispatches (each with its base position) when one
// cannot hold them all or would pass 2^31 positions. Grids are shaped so
// that few groups fall past the end; the kernels skip positions at or past
// end.
func splitDispatch(n uint64, local, run uint32, maxGroups [3]uint32) []dispatch {
	if n == 0 || local == 0 {
		return nil
	}
	perGroup := uint64(local) * uint64(max(run, 1)) // positions per group
	mx, my, mz := uint64(max(maxGroups[0], 1)), uint64(max(maxGroups[1], 1)), uint64(max(maxGroups[2], 1))
	per := max(uint64(maxPerDispatch)/perGroup, 1) // groups per dispatch
	if c := mx * my * mz; c < per {
		per = c
	}
	var out []dispatch
	for base := uint64(0); base < n; {
		groups := min(ceilDiv(n-base, perGroup), per)
		end := min(base+groups*perGroup, n)
		out = append(out, dispatch{base: base, end: end, groups: grid(groups, mx, my)})
		base = end
	}
	return out
}

// grid returns group counts (x, y, z) with x <= mx, y <= my whose product
// is at least g and exceeds it as little as the shape allows. The caller
// guarantees g <= mx * my * mz.
func grid(g, mx, my uint64) [3]uint32 {
	if g <= mx {
		return [3]uint32{uint32(g), 1, 1}
	}
	if g <= mx*my {
		y := ceilDiv(g, mx)
		return [3]uint32{uint32(ceilDiv(g, y)), uint32(y), 1}
	}
	z := ceilDiv(g, mx*my)
	yz := ceilDiv(g, mx)
	y := ceilDiv(yz, z)
	return [3]uint32{uint32(ceilDiv(g, y*z)), uint32(y), uint32(z)}
}
