//go:build !glfw && !darwin && !windows && cgo

package vk

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// gs_dlopen_vulkan opens the loader library and returns its
// vkGetInstanceProcAddr, or NULL with the dlerror text copied into err.
static void* gs_dlopen_vulkan(const char* name, char* err, size_t errlen) {
	void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char* e = dlerror();
		strncpy(err, e != NULL ? e : "dlopen failed", errlen - 1);
		err[errlen - 1] = 0;
		return NULL;
	}
	void* fn = dlsym(lib, "vkGetInstanceProcAddr");
	if (fn == NULL) {
		const char* e = dlerror();
		strncpy(err, e != NULL ? e : "dlsym failed", errlen - 1);
		err[errlen - 1] = 0;
		dlclose(lib);
		return NULL;
	}
	// The library stays open for the life of the process.
	return fn;
}
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

// defaultLoaderLibrary is the versioned name of the Khronos loader; the
// unversioned libvulkan.so only exists where development files are installed.
const defaultLoaderLibrary = "libvulkan.so.1"

// platformGetInstanceProcAddr opens libvulkan.so.1 (or the file named by
// GPUSCATTER_VULKAN_LIBRARY) and returns its vkGetInstanceProcAddr.
func platformGetInstanceProcAddr() (unsafe.Pointer, string, error) {
	name := defaultLoaderLibrary
	if v := os.Getenv("GPUSCATTER_VULKAN_LIBRARY"); v != "" {
		name = v
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errbuf [512]C.char
	fn := C.gs_dlopen_vulkan(cname, &errbuf[0], C.size_t(len(errbuf)))
	if fn == nil {
		return nil, "", fmt.Errorf("cannot load the Vulkan loader %s (Debian package libvulkan1): %s", name, C.GoString(&errbuf[0]))
	}
	return fn, name, nil
}
