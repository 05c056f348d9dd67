//go:build cgo

package vk

import (
	"fmt"
	"sync"

	vulkan "github.com/vulkan-go/vulkan"
)

// loader holds the process-wide result of loading the Vulkan loader library.
// vulkan-go keeps its function pointers in C globals, so loading happens
// exactly once and its error is kept for every later caller.
var loader struct {
	once   sync.Once
	err    error
	source string
}

// load finds vkGetInstanceProcAddr (through dlopen or GLFW, depending on the
// platform and build tags), hands it to vulkan-go and to this package's own C
// helpers, and loads the global entry points.
func load() error {
	loader.once.Do(func() {
		quietDriverCache()
		gipa, source, err := platformGetInstanceProcAddr()
		if err != nil {
			loader.err = fmt.Errorf("%w: %v", ErrNoDevice, err)
			return
		}
		setGetInstanceProcAddr(gipa)
		vulkan.SetGetInstanceProcAddr(gipa)
		if err := vulkan.Init(); err != nil {
			loader.err = fmt.Errorf("%w: %v", ErrNoDevice, err)
			return
		}
		loader.source = source
	})
	return loader.err
}

// LoaderSource reports where vkGetInstanceProcAddr came from ("libvulkan.so.1"
// through dlopen, or "glfw"), loading the library first if needed. It returns
// the load error when the library cannot be loaded.
func LoaderSource() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return loader.source, nil
}
