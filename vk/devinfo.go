//go:build cgo

package vk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ParseDeviceInfo reads the description of one device as DeviceInfo
// encodes it in JSON (one element of the array 'gpuscatter devices
// --json' prints; an array of exactly one element is taken too), so that
// a device can be planned for where it is not installed. Fields it does
// not know are ignored. It fails, with one line saying what is wrong, for
// JSON of another shape, a device type it does not know, and a device
// that cannot be planned for: no name, no memory allocation size, or a
// workgroup count of 0.
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
	caps := info.Capabilities
	switch {
	case info.Name == "":
		return DeviceInfo{}, errors.New("the device has no name")
	case info.Type.rank() == 4 && info.Type != DeviceOther:
		return DeviceInfo{}, fmt.Errorf("type %q is not a device type; want discrete, integrated, virtual, cpu or other", info.Type)
	case caps.MaxMemoryAllocationSize == 0:
		return DeviceInfo{}, errors.New("capabilities.maxMemoryAllocationSize is 0 or missing")
	}
	for i, n := range caps.MaxComputeWorkGroupCount {
		if n == 0 {
			return DeviceInfo{}, fmt.Errorf("capabilities.maxComputeWorkGroupCount[%d] is 0 or missing", i)
		}
	}
	return info, nil
}
