//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gsvk.h"
#include "gscall.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

const (
	validationLayer        = "VK_LAYER_KHRONOS_validation"
	extDebugUtils          = "VK_EXT_debug_utils"
	extPortabilityEnum     = "VK_KHR_portability_enumeration"
	extPhysicalProperties2 = "VK_KHR_get_physical_device_properties2"
	extValidationFeatures  = "VK_EXT_validation_features"

	instanceCreateEnumeratePortability = 0x00000001
)

func makeVersion(major, minor, patch uint32) uint32 {
	return major<<22 | minor<<12 | patch
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff)
}

// validationMode is what an instance validates: nothing, the layer's
// default checks with synchronization validation, or those and
// GPU-assisted validation.
type validationMode uint8

const (
	validationOff validationMode = iota
	validationSync
	validationGPUAssisted
)

// validationModeOf is the mode that opts ask for: GPUAssistedValidation
// implies Validation.
func validationModeOf(opts Options) validationMode {
	switch {
	case opts.GPUAssistedValidation:
		return validationGPUAssisted
	case opts.Validation:
		return validationSync
	}
	return validationOff
}

// instance is a VkInstance with the optional validation messenger.
type instance struct {
	handle     vulkan.Instance
	apiVersion uint32
	validation bool
	// syncValidation: the validation layer's synchronization validation
	// is on (VK_EXT_validation_features).
	syncValidation bool
	// gpuAssisted: the validation layer's GPU-assisted validation is on
	// too, so devices enable the features its instrumentation writes
	// through (createDevice).
	gpuAssisted bool
	// properties2Ext: VK_KHR_get_physical_device_properties2 was enabled
	// because the loader only offers Vulkan 1.0.
	properties2Ext bool

	log       *messageLog
	logHandle cgo.Handle
	msgInfo   *C.gsDebugUtilsMessengerCreateInfoEXT
	features  *C.gsValidationFeaturesEXT
	messenger C.uint64_t

	// key is what the instance was made under, and created the messages
	// of its creation, which a reused instance's log starts from (see
	// acquireInstance).
	key     instanceKey
	created []string

	// kept is the device a Close kept for the next Open on this
	// instance (keep.go), or nil.
	kept *keptDevice
	// external: the caller's instance (Adopt), never destroyed here.
	external bool
}

// bindOnce points vulkan-go's instance-level function table at the loader's
// entry points. The Khronos loader returns instance-independent trampolines,
// so the table obtained from the first instance serves every later one and
// it is never rewritten while other goroutines may be calling through it.
var bindOnce struct {
	sync.Once
	err error
}

func bindInstance(h vulkan.Instance) error {
	bindOnce.Do(func() {
		if err := vulkan.InitInstance(h); err != nil {
			bindOnce.err = fmt.Errorf("%w: %v", ErrNoDevice, err)
		}
	})
	return bindOnce.err
}

func instanceLayers() (map[string]bool, error) {
	props, err := enumerate("vkEnumerateInstanceLayerProperties", func(n *C.uint32_t, out *C.gsLayerProperties) C.int32_t {
		return C.gs_instance_layers(n, out)
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(props))
	for i := range props {
		out[C.GoString(&props[i].layerName[0])] = true
	}
	return out, nil
}

func instanceExtensions(layer string) (map[string]bool, error) {
	var name *C.char
	if layer != "" {
		name = C.CString(layer)
		defer C.free(unsafe.Pointer(name))
	}
	props, err := enumerate("vkEnumerateInstanceExtensionProperties", func(n *C.uint32_t, out *C.gsExtensionProperties) C.int32_t {
		return C.gs_instance_extensions(name, n, out)
	})
	if err != nil {
		return nil, err
	}
	return extensionNames(props), nil
}

// newInstance creates a Vulkan instance. With validation it enables the
// Khronos validation layer, with its synchronization validation (and with
// validationGPUAssisted its GPU-assisted validation), and a debug
// messenger that records warnings and errors, including those raised while
// the instance itself is created and destroyed. When the layer does not
// offer VK_EXT_validation_features, synchronization and GPU-assisted
// validation stay off and the message log says so (a message, so tests
// that require a silent layer fail rather than pass unchecked).
func newInstance(mode validationMode) (inst *instance, err error) {
	if err := load(); err != nil {
		return nil, err
	}
	instancesCreated.Add(1)
	validation := mode != validationOff
	inst = &instance{validation: validation}
	defer func() {
		if err != nil {
			inst.destroy()
			inst = nil
		}
	}()

	loaderVersion := uint32(C.gs_instance_version())
	api := loaderVersion &^ 0xfff
	if max := makeVersion(1, 3, 0); api > max {
		api = max
	}
	inst.apiVersion = api

	available, err := instanceExtensions("")
	if err != nil {
		return inst, err
	}
	var exts, layers []string
	var flags vulkan.InstanceCreateFlags
	if api < makeVersion(1, 1, 0) && available[extPhysicalProperties2] {
		exts = append(exts, extPhysicalProperties2)
		inst.properties2Ext = true
	}
	if available[extPortabilityEnum] {
		exts = append(exts, extPortabilityEnum)
		flags |= instanceCreateEnumeratePortability
	}
	var pNext unsafe.Pointer
	if validation {
		have, err := instanceLayers()
		if err != nil {
			return inst, err
		}
		if !have[validationLayer] {
			return inst, fmt.Errorf("%w: validation was requested but the %s layer is not installed (Debian package vulkan-validationlayers)", ErrUnsupported, validationLayer)
		}
		layerExts, err := instanceExtensions(validationLayer)
		if err != nil {
			return inst, err
		}
		if !available[extDebugUtils] && !layerExts[extDebugUtils] {
			return inst, fmt.Errorf("%w: validation was requested but %s is not available", ErrUnsupported, extDebugUtils)
		}
		layers = append(layers, validationLayer)
		exts = append(exts, extDebugUtils)
		inst.log = &messageLog{}
		inst.logHandle = cgo.NewHandle(inst.log)
		inst.msgInfo = (*C.gsDebugUtilsMessengerCreateInfoEXT)(C.calloc(1, C.sizeof_gsDebugUtilsMessengerCreateInfoEXT))
		if inst.msgInfo == nil {
			return inst, &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
		}
		C.gs_fill_messenger_info(inst.msgInfo, C.uintptr_t(inst.logHandle))
		pNext = unsafe.Pointer(inst.msgInfo)
		if layerExts[extValidationFeatures] || available[extValidationFeatures] {
			inst.features = (*C.gsValidationFeaturesEXT)(C.calloc(1, C.sizeof_gsValidationFeaturesEXT))
			if inst.features == nil {
				return inst, &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
			}
			gpuAssisted := mode == validationGPUAssisted
			C.gs_fill_validation_features(inst.features, pNext, cBool(gpuAssisted))
			pNext = unsafe.Pointer(inst.features)
			exts = append(exts, extValidationFeatures)
			inst.syncValidation, inst.gpuAssisted = true, gpuAssisted
		} else {
			inst.log.add(fmt.Sprintf("gpuscatter warning [sync-validation-off] the %s layer does not offer %s, "+
				"so synchronization validation is off: missing barriers go unreported (update the layer, "+
				"Debian package vulkan-validationlayers)", validationLayer, extValidationFeatures))
			if mode == validationGPUAssisted {
				inst.log.add(fmt.Sprintf("gpuscatter warning [gpu-assisted-validation-off] the %s layer does not offer %s, "+
					"so GPU-assisted validation is off: out-of-bounds accesses in shaders go unreported (update the layer, "+
					"Debian package vulkan-validationlayers)", validationLayer, extValidationFeatures))
			}
		}
	}

	h, r := createInstance(pNext, uint32(flags), api, layers, exts)
	if err := check("vkCreateInstance", r); err != nil {
		if r == vulkan.ErrorIncompatibleDriver {
			return inst, fmt.Errorf("%w: no Vulkan driver is installed (for a CPU device install Debian package mesa-vulkan-drivers): %v", ErrNoDevice, err)
		}
		return inst, err
	}
	inst.handle = h
	if err := bindInstance(h); err != nil {
		return inst, err
	}
	if validation {
		var m C.uint64_t
		r := vulkan.Result(C.gs_create_messenger(unsafe.Pointer(h), inst.msgInfo, &m))
		if err := check("vkCreateDebugUtilsMessengerEXT", r); err != nil {
			return inst, err
		}
		inst.messenger = m
	}
	return inst, nil
}

// cBool is 1 for true and 0 for false.
func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// instancesCreated counts the calls of newInstance past loading, for the
// tests of instance reuse.
var instancesCreated atomic.Int64

// physicalDevices lists the instance's physical devices.
func (inst *instance) physicalDevices() ([]vulkan.PhysicalDevice, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", vulkan.EnumeratePhysicalDevices(inst.handle, &n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	pds := make([]vulkan.PhysicalDevice, n)
	r := vulkan.EnumeratePhysicalDevices(inst.handle, &n, pds)
	if r != vulkan.Incomplete {
		if err := check("vkEnumeratePhysicalDevices", r); err != nil {
			return nil, err
		}
	}
	return pds[:n], nil
}

// messages returns the collected validation messages.
func (inst *instance) messages() []string {
	if inst == nil || inst.log == nil {
		return nil
	}
	return inst.log.snapshot()
}

// destroy releases the messenger and the instance. The message log stays
// readable afterwards.
func (inst *instance) destroy() {
	if inst == nil {
		return
	}
	inst.kept.destroy()
	inst.kept = nil
	if inst.handle != nil {
		if inst.messenger != 0 {
			C.gs_destroy_messenger(unsafe.Pointer(inst.handle), inst.messenger)
			inst.messenger = 0
		}
		vulkan.DestroyInstance(inst.handle, nil)
		inst.handle = nil
	}
	if inst.msgInfo != nil {
		C.free(unsafe.Pointer(inst.msgInfo))
		inst.msgInfo = nil
	}
	if inst.features != nil {
		C.free(unsafe.Pointer(inst.features))
		inst.features = nil
	}
	if inst.logHandle != 0 {
		inst.logHandle.Delete()
		inst.logHandle = 0
	}
}

// ValidationAvailable reports whether the Khronos validation layer is
// installed, so that Options.Validation can be honoured. It fails with an
// error wrapping ErrNoDevice when there is no Vulkan loader.
func ValidationAvailable() (bool, error) {
	if err := load(); err != nil {
		return false, err
	}
	have, err := instanceLayers()
	if err != nil {
		return false, err
	}
	return have[validationLayer], nil
}
