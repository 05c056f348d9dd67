//go:build cgo

package vk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// ParseDeviceInfo reads the description of one device as DeviceInfo
// encodes it in JSON (one element of the array 'gpuscatter devices
// --json' prints; an array of exactly one element is taken too), so that
// a device can be planned for where it is not installed. Fields it does
// not know are ignored. It fails, with one line saying what is wrong, for
// JSON of another shape, a device type it does not know, and a device
// that cannot be planned for: no name, or a limit that planning reads
// (planLimits) missing, 0 or out of the range a device can have, or
// measured figures (optional) that are not all positive.
func ParseDeviceInfo(b []byte) (DeviceInfo, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return DeviceInfo{}, fmt.Errorf("not a device description: %w", err)
		}
		if len(list) != 1 {
			return DeviceInfo{}, fmt.Errorf("an array of %d devices; want one device, one element of the array", len(list))
		}
		b = list[0]
	}
	if len(b) == 0 || b[0] != '{' {
		return DeviceInfo{}, errors.New("not a device description: want a JSON object, one element of what 'gpuscatter devices --json' prints")
	}
	var info DeviceInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return DeviceInfo{}, fmt.Errorf("not a device description: %w", err)
	}
	switch {
	case info.Name == "":
		return DeviceInfo{}, errors.New("the device has no name")
	case info.Type.rank() == 4 && info.Type != DeviceOther:
		return DeviceInfo{}, fmt.Errorf("type %q is not a device type; want discrete, integrated, virtual, cpu or other", info.Type)
	}
	for _, l := range planLimits(info) {
		if err := l.check(); err != nil {
			return DeviceInfo{}, err
		}
	}
	if m := info.Measured; m != nil {
		if err := m.Check(); err != nil {
			return DeviceInfo{}, fmt.Errorf("measured: %w", err)
		}
	}
	return info, nil
}

// limit is one limit of a device description with the range a device can
// have: at least least (the least Vulkan requires of every device, where
// it states one), at most most (where a larger value would make planning
// take a kernel or a call to fit that does not).
type limit struct {
	field       string // its JSON path: "capabilities.maxComputeSharedMemorySize"
	value       uint64
	least, most uint64
}

// The range of the memory sizes: from 1 MiB, less than any device holds a
// tensor in, to 1 PiB, beyond any device.
const (
	leastMemory = 1 << 20
	mostMemory  = 1 << 50
)

// planLimits returns the limits of info that planning a call reads (the
// gpu package's PlanFor): the device memory a call must fit in, the
// largest buffer, which sets the chunk size, the workgroup counts of a
// dispatch, the workgroup size every kernel takes, and the workgroup
// memory that decides whether the sorts and tables of the in-order folds
// fit. A limit left out of the JSON reads as 0, which planning would take
// at its word (no workgroup memory at all, or, where 0 means "no limit",
// any amount), so each must be present and in its range. The compute
// limits' least values are Vulkan's required limits.
func planLimits(info DeviceInfo) []limit {
	caps := info.Capabilities
	ls := []limit{
		{"deviceLocalMemory", info.DeviceLocalMemory, leastMemory, mostMemory},
		{"capabilities.maxMemoryAllocationSize", caps.MaxMemoryAllocationSize, leastMemory, mostMemory},
	}
	for i, n := range caps.MaxComputeWorkGroupCount {
		ls = append(ls, limit{fmt.Sprintf("capabilities.maxComputeWorkGroupCount[%d]", i), uint64(n), 65535, math.MaxUint32})
	}
	for i, n := range caps.MaxComputeWorkGroupSize {
		ls = append(ls, limit{fmt.Sprintf("capabilities.maxComputeWorkGroupSize[%d]", i), uint64(n), [3]uint64{128, 128, 64}[i], math.MaxUint32})
	}
	return append(ls,
		limit{"capabilities.maxComputeWorkGroupInvocations", uint64(caps.MaxComputeWorkGroupInvocations), 128, math.MaxUint32},
		limit{"capabilities.maxComputeSharedMemorySize", uint64(caps.MaxComputeSharedMemorySize), 16384, 16 << 20})
}

// check fails when the limit is 0 (or missing) or out of its range.
func (l limit) check() error {
	switch {
	case l.value == 0:
		return fmt.Errorf("%s is 0 or missing", l.field)
	case l.value < l.least:
		return fmt.Errorf("%s is %d, less than any device has (at least %d)", l.field, l.value, l.least)
	case l.value > l.most:
		return fmt.Errorf("%s is %d, more than any device has (at most %d)", l.field, l.value, l.most)
	}
	return nil
}
