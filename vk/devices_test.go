//go:build cgo

package vk

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vulkan "github.com/vulkan-go/vulkan"
)

// lavapipe returns the Mesa software device, for the tests whose subject
// is lavapipe itself. When it is not installed the test fails under
// CI=true and otherwise skips, naming the missing driver: a machine with
// only a vendor's driver (the qualification kit's) has no lavapipe to test.
func lavapipe(t *testing.T) DeviceInfo {
	t.Helper()
	devs, err := Devices()
	require.NoError(t, err, "a Vulkan device is required; on Debian install mesa-vulkan-drivers (lavapipe)")
	for _, d := range devs {
		if d.DriverName == "llvmpipe" || strings.Contains(d.Name, "llvmpipe") {
			return d
		}
	}
	var names []string
	for _, d := range devs {
		names = append(names, fmt.Sprintf("%s (%s)", d.Name, d.DriverName))
	}
	msg := fmt.Sprintf("lavapipe (Mesa's llvmpipe Vulkan driver, Debian's mesa-vulkan-drivers) is not installed; devices: %s",
		strings.Join(names, ", "))
	if os.Getenv("CI") == "true" {
		require.FailNow(t, msg)
	}
	t.Skip(msg)
	return DeviceInfo{}
}

// defaultInfo returns what Devices says of the device that Open picks by
// default, and that device opened by openTest with opts.
func defaultInfo(t *testing.T, opts Options) (DeviceInfo, *Device) {
	t.Helper()
	d := openTest(t, opts)
	devs, err := Devices()
	require.NoError(t, err)
	i := d.Info().Index
	require.Less(t, i, len(devs))
	require.Equal(t, d.Info().Name, devs[i].Name)
	return devs[i], d
}

func TestDevices(t *testing.T) {
	devs, err := Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	for i, d := range devs {
		assert.Equal(t, i, d.Index)
		assert.NotEmpty(t, d.Name)
		assert.Contains(t, []DeviceType{DeviceDiscrete, DeviceIntegrated, DeviceVirtual, DeviceCPU, DeviceOther}, d.Type)
		assert.Regexp(t, `^1\.\d+\.\d+$`, d.APIVersion)
		assert.NotZero(t, d.VendorID)
		assert.Len(t, d.PipelineCacheUUID, 32)
		t.Logf("device %d: %s (%s) API %s driver %q %q, %d MiB local", d.Index, d.Name, d.Type, d.APIVersion,
			d.DriverName, d.DriverInfo, d.DeviceLocalMemory>>20)
	}

	js, err := json.Marshal(devs)
	require.NoError(t, err)
	var generic []map[string]any
	require.NoError(t, json.Unmarshal(js, &generic))
	for _, key := range []string{"index", "name", "type", "vendorID", "deviceID", "apiVersion", "driverName",
		"driverInfo", "deviceLocalMemory", "capabilities"} {
		assert.Contains(t, generic[0], key)
	}
	caps := generic[0]["capabilities"].(map[string]any)
	for _, key := range []string{"float32AtomicAdd", "float32AtomicMinMax", "float16AtomicAdd", "float64AtomicAdd",
		"int64BufferAtomics", "shaderInt64", "shaderFloat64", "shaderInt16", "storageBuffer8BitAccess",
		"storageBuffer16BitAccess", "bufferDeviceAddress", "subgroupSize", "timestamps", "timestampPeriodNs",
		"maxStorageBufferRange", "maxMemoryAllocationSize", "maxComputeWorkGroupCount", "maxComputeWorkGroupSize",
		"maxComputeWorkGroupInvocations", "maxPushConstantsSize", "minStorageBufferOffsetAlignment", "unifiedMemory"} {
		assert.Contains(t, caps, key)
	}
}

func TestLavapipeCapabilities(t *testing.T) {
	d := lavapipe(t)
	assert.Equal(t, DeviceCPU, d.Type)
	assert.Equal(t, "llvmpipe", d.DriverName)
	assert.Contains(t, d.DriverInfo, "Mesa")
	assert.NotZero(t, d.DeviceLocalMemory)
	c := d.Capabilities
	assert.True(t, c.Float32Atomics)
	assert.True(t, c.Float32AtomicAdd)
	assert.True(t, c.Float32AtomicMinMax)
	assert.True(t, c.Int64BufferAtomics)
	assert.True(t, c.ShaderInt64)
	assert.True(t, c.ShaderFloat64)
	assert.True(t, c.ShaderInt16)
	assert.True(t, c.StorageBuffer8BitAccess)
	assert.True(t, c.StorageBuffer16BitAccess)
	assert.True(t, c.BufferDeviceAddress)
	assert.True(t, c.Timestamps)
	assert.Greater(t, c.TimestampPeriod, float32(0))
	assert.NotZero(t, c.TimestampValidBits)
	assert.NotZero(t, c.SubgroupSize)
	assert.Contains(t, c.SubgroupOperations, "basic")
	assert.GreaterOrEqual(t, c.MaxStorageBufferRange, uint64(1<<27))
	assert.GreaterOrEqual(t, c.MaxMemoryAllocationSize, uint64(1<<30))
	assert.GreaterOrEqual(t, c.MaxComputeWorkGroupCount[0], uint32(65535))
	assert.GreaterOrEqual(t, c.MaxComputeWorkGroupSize[0], uint32(128))
	assert.GreaterOrEqual(t, c.MaxComputeWorkGroupInvocations, uint32(128))
	assert.GreaterOrEqual(t, c.MaxPushConstantsSize, uint32(128))
	assert.NotZero(t, c.MinStorageBufferOffsetAlignment)
	assert.True(t, c.UnifiedMemory, "lavapipe memory is device-local and host-visible")
}

// TestOpenCapabilitiesEnabled: the default device enables every
// capability Devices reports; its memory is unified unless staging was
// asked for (NoUnifiedMemory, GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1).
func TestOpenCapabilitiesEnabled(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			info, d := defaultInfo(t, Options{NoUnifiedMemory: staged})
			want := info.Capabilities
			want.UnifiedMemory = wantUnified(t, d, Options{NoUnifiedMemory: staged})
			assert.Equal(t, want, d.Capabilities())
			assert.Equal(t, want.UnifiedMemory, d.UnifiedMemory())
			if staged {
				assert.False(t, d.UnifiedMemory())
			}
		})
	}
}

func TestOpenSelector(t *testing.T) {
	devs, err := Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	last := devs[len(devs)-1]

	t.Run("index", func(t *testing.T) {
		d := openTest(t, Options{Selector: strconv.Itoa(last.Index)})
		assert.Equal(t, last.Name, d.Info().Name)
	})
	t.Run("name", func(t *testing.T) {
		// A case-swapped substring of the name.
		sub := strings.ToUpper(last.Name[:len(last.Name)/2+1])
		d := openTest(t, Options{Selector: sub})
		assert.True(t, strings.Contains(strings.ToUpper(d.Info().Name), sub))
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv(EnvDevice, strconv.Itoa(last.Index))
		d := openTest(t, Options{})
		assert.Equal(t, last.Name, d.Info().Name)
	})
	t.Run("best", func(t *testing.T) {
		t.Setenv(EnvDevice, "")
		d := openTest(t, Options{})
		for _, other := range devs {
			assert.LessOrEqual(t, d.Info().Type.rank(), other.Type.rank())
		}
	})
	t.Run("bad name", func(t *testing.T) {
		d, err := Open(Options{Selector: "no-such-gpu-9000", PipelineCacheDir: "off"})
		assert.Nil(t, d)
		require.ErrorIs(t, err, ErrNoDevice)
		assert.Contains(t, err.Error(), `"no-such-gpu-9000"`)
		assert.Contains(t, err.Error(), last.Name, "the message lists the devices")
		var se *SelectorError
		require.ErrorAs(t, err, &se, "a selector that selects nothing says so")
		assert.Equal(t, "no-such-gpu-9000", se.Selector)
	})
	t.Run("bad index", func(t *testing.T) {
		_, err := Open(Options{Selector: strconv.Itoa(len(devs) + 3), PipelineCacheDir: "off"})
		require.ErrorIs(t, err, ErrNoDevice)
		assert.Contains(t, err.Error(), "out of range")
		var se *SelectorError
		require.ErrorAs(t, err, &se)
	})
	t.Run("bad env", func(t *testing.T) {
		t.Setenv(EnvDevice, "no-such-gpu-9000")
		_, err := Open(Options{PipelineCacheDir: "off"})
		require.ErrorIs(t, err, ErrNoDevice)
		var se *SelectorError
		require.ErrorAs(t, err, &se)
	})
}

func TestValidationMessagesCollected(t *testing.T) {
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	// Misuse the API on purpose: a buffer without any usage flag.
	ci := vulkan.BufferCreateInfo{
		SType:       vulkan.StructureTypeBufferCreateInfo,
		Size:        64,
		SharingMode: vulkan.SharingModeExclusive,
	}
	var h vulkan.Buffer
	r := vulkan.CreateBuffer(d.handle, &ci, nil, &h)
	ci.Free()
	if r == vulkan.Success {
		vulkan.DestroyBuffer(d.handle, h, nil)
	}
	require.NoError(t, d.Close())
	msgs := d.ValidationMessages()
	require.NotEmpty(t, msgs)
	assert.Contains(t, strings.Join(msgs, "\n"), "VUID-VkBufferCreateInfo-usage")
	assert.Empty(t, d.LiveObjects())
}

func TestValidationOffHasNoMessages(t *testing.T) {
	d, err := Open(Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	assert.Nil(t, d.ValidationMessages())
	require.NoError(t, d.Close())
	assert.Empty(t, d.LiveObjects())
}

func TestResultError(t *testing.T) {
	err := check("vkAllocateMemory", vulkan.ErrorOutOfDeviceMemory)
	assert.EqualError(t, err, "vk: vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY")
	assert.ErrorIs(t, err, ErrOutOfMemory)
	assert.NotErrorIs(t, err, ErrDeviceLost)
	var re *ResultError
	require.ErrorAs(t, fmt.Errorf("wrapped: %w", err), &re)
	assert.Equal(t, "vkAllocateMemory", re.Call)
	assert.Equal(t, vulkan.ErrorOutOfDeviceMemory, re.Result)

	assert.ErrorIs(t, check("vkMapMemory", vulkan.ErrorOutOfHostMemory), ErrOutOfMemory)
	assert.ErrorIs(t, check("vkQueueSubmit", vulkan.ErrorDeviceLost), ErrDeviceLost)
	assert.EqualError(t, check("vkQueueSubmit", vulkan.ErrorDeviceLost), "vk: vkQueueSubmit: VK_ERROR_DEVICE_LOST")
	assert.ErrorIs(t, check("vkCreateInstance", vulkan.ErrorIncompatibleDriver), ErrNoDevice)
	assert.ErrorIs(t, check("vkCreateDevice", vulkan.ErrorFeatureNotPresent), ErrUnsupported)
	assert.NoError(t, check("vkCreateFence", vulkan.Success))
	assert.Equal(t, "VkResult(-424242)", ResultName(-424242))
	assert.Equal(t, "VK_ERROR_OUT_OF_POOL_MEMORY", ResultName(vulkan.ErrorOutOfPoolMemory))
}

// runChild runs the helper mode in a child test process with extra
// environment and returns its output and exit status.
func runChild(t *testing.T, mode string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestMissingValidationLayer(t *testing.T) {
	// VK_LAYER_PATH replaces the loader's search path for explicit layers.
	out, err := runChild(t, "validation", "VK_LAYER_PATH="+t.TempDir())
	require.NoError(t, err, out)
	assert.Contains(t, out, "VK_LAYER_KHRONOS_validation")
	assert.Contains(t, out, "vulkan-validationlayers")
}

func TestNoDriverIsErrNoDevice(t *testing.T) {
	out, err := runChild(t, "devices", "VK_ICD_FILENAMES=/nonexistent/icd.json", "VK_DRIVER_FILES=/nonexistent/icd.json")
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("child did not report ErrNoDevice: %s", out)
	}
	require.NoError(t, err, out)
	assert.Contains(t, out, "no Vulkan device")
}
