// Declarations for buffer device addresses (Vulkan 1.2 bufferDeviceAddress,
// VK_KHR_buffer_device_address), which the 1.1.88 headers of vulkan-go lack.
// The layouts are checked against the Khronos headers by
// testdata/address_layout_check.c.

#ifndef GPUSCATTER_GSADDR_H
#define GPUSCATTER_GSADDR_H

#include <stdint.h>

#define GS_ST_MEMORY_ALLOCATE_FLAGS_INFO 1000060000u
#define GS_ST_BUFFER_DEVICE_ADDRESS_INFO 1000244001u
#define GS_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT 0x00000002u
#define GS_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT 0x00020000u

// VkMemoryAllocateFlagsInfo.
typedef struct gsMemoryAllocateFlagsInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t deviceMask;
} gsMemoryAllocateFlagsInfo;

// VkBufferDeviceAddressInfo; the buffer is a non-dispatchable handle.
typedef struct gsBufferDeviceAddressInfo {
	uint32_t sType;
	const void* pNext;
	uint64_t buffer;
} gsBufferDeviceAddressInfo;

void* gs_device_address_alloc_info(void);
uint64_t gs_buffer_address(void* instance, void* device, uint64_t buffer);

#endif
