// Buffer device addresses: the vkAllocateMemory flags that give memory an
// address, and vkGetBufferDeviceAddress, loaded through
// vkGetDeviceProcAddr.

#include <stddef.h>

#include "gsvk.h"
#include "gsaddr.h"

typedef void* (GSVK_CALL* gsGetDeviceProcAddr)(void* device, const char* name);
typedef uint64_t (GSVK_CALL* gsGetBufferDeviceAddress)(void* device, const gsBufferDeviceAddressInfo* info);

// Never modified; chained onto every storage buffer's allocation.
static const gsMemoryAllocateFlagsInfo gs_device_address_alloc = {
	GS_ST_MEMORY_ALLOCATE_FLAGS_INFO,
	NULL,
	GS_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	0u,
};

void* gs_device_address_alloc_info(void) {
	return (void*)&gs_device_address_alloc;
}

// gs_buffer_address returns the device address of buffer, or 0 when neither
// vkGetBufferDeviceAddress nor its KHR alias can be loaded.
uint64_t gs_buffer_address(void* instance, void* device, uint64_t buffer) {
	gsGetDeviceProcAddr gdpa = (gsGetDeviceProcAddr)gs_proc(instance, "vkGetDeviceProcAddr");
	if (gdpa == NULL) {
		return 0;
	}
	gsGetBufferDeviceAddress fn = (gsGetBufferDeviceAddress)gdpa(device, "vkGetBufferDeviceAddress");
	if (fn == NULL) {
		fn = (gsGetBufferDeviceAddress)gdpa(device, "vkGetBufferDeviceAddressKHR");
	}
	if (fn == NULL) {
		return 0;
	}
	gsBufferDeviceAddressInfo info = {GS_ST_BUFFER_DEVICE_ADDRESS_INFO, NULL, buffer};
	return fn(device, &info);
}
