//go:build cgo

package gpu

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// workgroupBytes returns the bytes of the Workgroup-storage variables of
// a SPIR-V module, its specialization constants taking the values spec
// (by constant ID; a constant without one keeps its default).
func workgroupBytes(spirv []byte, spec []uint32) (uint64, error) {
	if len(spirv)%4 != 0 || len(spirv) < 20 || binary.LittleEndian.Uint32(spirv) != 0x07230203 {
		return 0, fmt.Errorf("not a little-endian SPIR-V module")
	}
	words := make([]uint32, len(spirv)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(spirv[4*i:])
	}
	const (
		opTypeBool, opTypeInt, opTypeFloat, opTypeVector = 20, 21, 22, 23
		opTypeArray, opTypeStruct, opTypePointer         = 28, 30, 32
		opConstant, opSpecConstant, opSpecConstantOp     = 43, 50, 52
		opVariable, opDecorate                           = 59, 71
		decorationSpecID, storageWorkgroup               = 1, 4
	)
	size := map[uint32]uint64{}    // type id -> bytes
	value := map[uint32]uint64{}   // constant id -> value
	specID := map[uint32]uint32{}  // constant id -> SpecId
	pointee := map[uint32]uint32{} // Workgroup pointer type id -> pointee type id
	var total uint64
	for i := 5; i < len(words); {
		n, op := int(words[i]>>16), words[i]&0xffff
		if n == 0 || i+n > len(words) {
			return 0, fmt.Errorf("malformed instruction at word %d", i)
		}
		a := words[i+1 : i+n]
		switch op {
		case opDecorate:
			if len(a) >= 3 && a[1] == decorationSpecID {
				specID[a[0]] = a[2]
			}
		case opTypeBool:
			size[a[0]] = 4
		case opTypeInt, opTypeFloat:
			size[a[0]] = uint64(a[1]) / 8
		case opTypeVector:
			size[a[0]] = size[a[1]] * uint64(a[2])
		case opTypeArray:
			l, ok := value[a[2]]
			if !ok {
				return 0, fmt.Errorf("array %d: length %d is no constant", a[0], a[2])
			}
			size[a[0]] = size[a[1]] * l
		case opTypeStruct:
			var s uint64
			for _, m := range a[1:] {
				s += size[m]
			}
			size[a[0]] = s
		case opTypePointer:
			if a[1] == storageWorkgroup {
				pointee[a[0]] = a[2]
			}
		case opConstant:
			value[a[1]] = uint64(a[2])
		case opSpecConstant:
			value[a[1]] = uint64(a[2])
			if id, ok := specID[a[1]]; ok && int(id) < len(spec) {
				value[a[1]] = uint64(spec[id])
			}
		case opSpecConstantOp:
			// An array sized by a computed constant would be missed.
			value[a[1]] = 0
		case opVariable:
			if t, ok := pointee[a[0]]; ok {
				if size[t] == 0 {
					return 0, fmt.Errorf("variable %d: type %d of unknown size", a[1], t)
				}
				total += size[t]
			}
		}
		i += n
	}
	return total, nil
}

// TestWorkgroupMemory: every kernel fits the 16 KiB of workgroup memory
// that Vulkan guarantees, except the three whose need planning checks
// against the device's maxComputeSharedMemorySize: the last-writer table
// of resolve (4*tableWords bytes, facts.table), the sort's scatter stage
// (sortSharedBytes, facts.sortFits) and the bucketed fold (its variant's
// SharedBytes, planBucket, no more than the sort's so that a device that
// sorts can bucket); their sizes are what the planner assumes.
func TestWorkgroupMemory(t *testing.T) {
	const guaranteed = 16 << 10
	var sortSeen, tableSeen, bucketSeen int
	for _, v := range shaders.All() {
		spirv, err := v.SPIRV()
		require.NoError(t, err, v.Name)
		for _, flags := range []uint32{0, flagTable, flagPrivate} {
			got, err := workgroupBytes(spirv, v.Specialize(flags))
			require.NoError(t, err, v.Name)
			switch {
			case v.Key.Family == shaders.Sort && v.Key.Stage == shaders.RadixScatter:
				sortSeen++
				assert.Equal(t, uint64(sortSharedBytes), got, "%s: sortSharedBytes is not its workgroup memory", v.Name)
			case v.Key.Family == shaders.Reduce && v.Key.Private:
				bucketSeen++
				assert.Equal(t, uint64(v.SharedBytes), got, "%s: SharedBytes is not its workgroup memory", v.Name)
				assert.LessOrEqual(t, got, uint64(sortSharedBytes), "%s: more workgroup memory than the sort's", v.Name)
			case got > guaranteed:
				tableSeen++
				assert.Equal(t, shaders.Resolve, v.Key.Family, "%s: %d bytes of workgroup memory, unchecked by planning", v.Name, got)
				assert.LessOrEqual(t, got, uint64(4*tableWords), "%s: more workgroup memory than facts.table checks", v.Name)
			}
		}
	}
	// The workgroup-memory scatter specialised past shaders.PrivateWords
	// (shaders.Variant.WithPrivateWords) takes what its SharedBytes say,
	// which planning checks (callPlan.split), and the capacities of the
	// profiles' devices fit it.
	var wideSeen int
	for _, v := range shaders.All() {
		if v.Key.Family != shaders.Scatter || !v.Key.Private {
			continue
		}
		spirv, err := v.SPIRV()
		require.NoError(t, err, v.Name)
		for _, shared := range []uint64{16 << 10, 32 << 10, 48 << 10, 1 << 20} {
			words := shaders.PrivateCapacity(shared)
			w, err := v.WithPrivateWords(uint32(words))
			require.NoError(t, err, v.Name)
			got, err := workgroupBytes(spirv, w.Specialize(flagPrivate))
			require.NoError(t, err, w.Name)
			assert.Equal(t, uint64(w.SharedBytes), got, "%s: SharedBytes is not its workgroup memory", w.Name)
			assert.LessOrEqual(t, got, max(shared, uint64(v.SharedBytes)), "%s: more than %d bytes", w.Name, shared)
			wideSeen++
		}
	}
	assert.Positive(t, wideSeen, "no workgroup-memory scatter variant")
	assert.Positive(t, sortSeen, "no sort scatter variant")
	assert.Positive(t, tableSeen, "no resolve variant with the last-writer table")
	assert.Positive(t, bucketSeen, "no bucketed fold variant")
	require.Greater(t, sortSharedBytes, guaranteed, "the check below would test nothing")
}

// factsFile reads a device description of testdata/facts.
func factsFile(t *testing.T, name string) vk.DeviceInfo {
	t.Helper()
	b, err := figuresData.ReadFile("testdata/facts/" + name + ".json")
	require.NoError(t, err)
	info, err := vk.ParseDeviceInfo(b)
	require.NoError(t, err, name)
	return info
}

// TestSortNeedsItsWorkgroupMemory: on a device with Vulkan's guaranteed
// 16 KiB of workgroup memory (lavapipe's description with that limit)
// the in-order fold, whose sort takes sortSharedBytes, is refused in one
// line naming the limit where nothing else can run the plan
// (deterministic float sums; 64-bit reductions without 64-bit atomics),
// while small float sums take the atomics instead and plans of one slot
// (no sort) still fold in order; one byte more or less than the sort
// needs decides.
func TestSortNeedsItsWorkgroupMemory(t *testing.T) {
	small := factsFile(t, "lavapipe-16KiB-shared")
	require.EqualValues(t, 16384, small.Capabilities.MaxComputeSharedMemorySize)
	plan := func(t *testing.T, info vk.DeviceInfo, opts Options, req ops.Request) (PlanNeeds, error) {
		t.Helper()
		p, err := ops.PrepareShapes(req)
		require.NoError(t, err)
		return PlanFor(info, opts, p)
	}
	requireRefused := func(t *testing.T, err error, limit int) {
		t.Helper()
		require.ErrorIs(t, err, ops.ErrUnsupported)
		assert.NotContains(t, err.Error(), "\n")
		assert.Contains(t, err.Error(), fmt.Sprintf("the in-order fold's sort takes %d bytes of workgroup memory; the device's maxComputeSharedMemorySize is %d", sortSharedBytes, limit))
	}
	sum := elementsReq("add", tensor.Float32, []int{1024}, []int{3000})
	oneSlot := elementsReq("add", tensor.Float32, []int{1}, []int{3000})
	noAtomics64 := small
	noAtomics64.Capabilities.Int64BufferAtomics = false
	for _, c := range []struct {
		name  string
		info  vk.DeviceInfo
		opts  Options
		req   ops.Request
		path  string // "" for a refusal
		limit int
	}{
		{"deterministic sum", small, Options{Deterministic: true}, sum, "", 16384},
		{"small sum", small, Options{}, sum, "native+hot", 0},
		{"one slot", small, Options{Deterministic: true}, oneSlot, "ordered", 0},
		{"int64 sum without int64 atomics", noAtomics64, Options{}, elementsReq("add", tensor.Int64, []int{64}, []int{100}), "", 16384},
		{"int64 sum with int64 atomics", small, Options{}, elementsReq("add", tensor.Int64, []int{64}, []int{100}), "native", 0},
		{"lavapipe's 32 KiB", factsFile(t, "lavapipe"), Options{Deterministic: true}, sum, "ordered", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := plan(t, c.info, c.opts, c.req)
			if c.path == "" {
				requireRefused(t, err, c.limit)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.path, n.Path)
		})
	}
	for _, limit := range []uint32{sortSharedBytes - 1, sortSharedBytes} {
		info := small
		info.Capabilities.MaxComputeSharedMemorySize = limit
		n, err := plan(t, info, Options{Deterministic: true}, sum)
		if limit < sortSharedBytes {
			requireRefused(t, err, int(limit))
			continue
		}
		require.NoError(t, err, "a limit of exactly the sort's need")
		assert.Equal(t, "ordered", n.Path)
	}
}
