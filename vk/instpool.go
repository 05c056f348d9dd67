//go:build cgo

package vk

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Instances are kept for the life of the process and reused: Open takes an
// idle one made under the same settings, and Close gives it back after
// destroying its device. Some drivers do not survive many vkCreateInstance
// and vkDestroyInstance cycles in one process (NVIDIA's 580 driver fails
// vkCreateInstance with VK_ERROR_INCOMPATIBLE_DRIVER after about twenty),
// and a program that opens and closes devices in a loop (a test suite, a
// conformance run, a server that opens a backend per request) would meet
// that limit. With reuse, a process creates as many instances as it holds
// devices at once. ReleaseInstances destroys the idle ones.

// instanceKey is what an instance was made under: the validation mode
// (none, synchronization validation, or GPU-assisted validation as well,
// which the layer fixes when the instance is created), and the environment that the loader, the layers and the drivers read when an
// instance is created (which drivers and layers are found, and how they
// behave). An instance is reused only under the same key, so a process
// that changes that environment between two Opens gets what a fresh
// instance would give.
type instanceKey struct {
	validation validationMode
	env        string
}

// instanceEnvPrefixes are the environment variables of instanceKey: the
// Vulkan loader's and layers' (VK_), Mesa's and its drivers' (MESA_, LP_,
// RADV_, ANV_, TU_, PAN_), NVIDIA's (__GL_, __NV_) and GLVND's (__EGL_,
// __GLX_).
var instanceEnvPrefixes = []string{"VK_", "MESA_", "LP_", "RADV_", "ANV_", "TU_", "PAN_", "__GL_", "__NV_", "__EGL_", "__GLX_"}

func currentInstanceKey(validation validationMode) instanceKey {
	var env []string
	for _, kv := range os.Environ() {
		for _, p := range instanceEnvPrefixes {
			if strings.HasPrefix(kv, p) {
				env = append(env, kv)
				break
			}
		}
	}
	sort.Strings(env)
	return instanceKey{validation: validation, env: strings.Join(env, "\x00")}
}

// idleInstances holds the instances no Device uses, by key.
var idleInstances struct {
	sync.Mutex
	byKey map[instanceKey][]*instance
}

// acquireInstance returns an idle instance made under the current key, its
// message log reset to the messages of its creation, or a new one.
func acquireInstance(validation validationMode) (*instance, error) {
	key := currentInstanceKey(validation)
	idleInstances.Lock()
	if list := idleInstances.byKey[key]; len(list) > 0 {
		inst := list[len(list)-1]
		idleInstances.byKey[key] = list[:len(list)-1]
		idleInstances.Unlock()
		if inst.log != nil {
			inst.log.reset(inst.created)
		}
		return inst, nil
	}
	idleInstances.Unlock()
	inst, err := newInstance(validation)
	if err != nil {
		return nil, err
	}
	inst.key = key
	inst.created = inst.messages()
	return inst, nil
}

// releaseInstance gives inst back for reuse, or destroys it when reuse is
// false (its device was lost, or it is only partly made).
func releaseInstance(inst *instance, reuse bool) {
	if inst == nil {
		return
	}
	if !reuse || inst.handle == nil {
		inst.destroy()
		return
	}
	idleInstances.Lock()
	defer idleInstances.Unlock()
	if idleInstances.byKey == nil {
		idleInstances.byKey = map[instanceKey][]*instance{}
	}
	idleInstances.byKey[inst.key] = append(idleInstances.byKey[inst.key], inst)
}

// ErrValidation marks the messages the validation layer reported while
// ReleaseInstances destroyed the instances.
var ErrValidation = errors.New("vk: validation messages")

// ReleaseInstances destroys the Vulkan instances that Close kept for reuse
// (see Open). Devices still open keep theirs. A program need not call it:
// the instances go with the process. It is for leak checkers and tests that
// want every Vulkan object gone, and for programs that want the memory and
// threads a driver keeps per instance back. Messages the validation layer
// reports while the instances are destroyed (objects a device left alive
// past its destruction) come back as an error wrapping ErrValidation.
func ReleaseInstances() error {
	idleInstances.Lock()
	var all []*instance
	for _, list := range idleInstances.byKey {
		all = append(all, list...)
	}
	idleInstances.byKey = nil
	idleInstances.Unlock()
	var msgs []string
	for _, inst := range all {
		n := len(inst.messages())
		inst.destroy()
		msgs = append(msgs, inst.messages()[n:]...)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%w: while destroying %d instances: %s", ErrValidation, len(all), strings.Join(msgs, "; "))
	}
	return nil
}

// idleInstanceCount is the number of instances kept for reuse.
func idleInstanceCount() int {
	idleInstances.Lock()
	defer idleInstances.Unlock()
	n := 0
	for _, list := range idleInstances.byKey {
		n += len(list)
	}
	return n
}
