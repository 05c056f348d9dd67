/*
 * Compile-time check that gsaddr.h matches the Khronos headers. Built by
 * TestAddressLayouts with the system's Vulkan headers (Debian package
 * libvulkan-dev); nothing here is linked into the package.
 */
#include <stddef.h>
#include <vulkan/vulkan.h>

#include "../gsaddr.h"

#define SAME_SIZE(a, b) _Static_assert(sizeof(a) == sizeof(b), "size of " #a)
#define SAME_OFFSET(a, b, m) _Static_assert(offsetof(a, m) == offsetof(b, m), "offset of " #a "." #m)
#define SAME_VALUE(a, b) _Static_assert((a) == (b), #a)

SAME_SIZE(gsMemoryAllocateFlagsInfo, VkMemoryAllocateFlagsInfo);
SAME_OFFSET(gsMemoryAllocateFlagsInfo, VkMemoryAllocateFlagsInfo, pNext);
SAME_OFFSET(gsMemoryAllocateFlagsInfo, VkMemoryAllocateFlagsInfo, flags);
SAME_OFFSET(gsMemoryAllocateFlagsInfo, VkMemoryAllocateFlagsInfo, deviceMask);
SAME_SIZE(gsBufferDeviceAddressInfo, VkBufferDeviceAddressInfo);
SAME_OFFSET(gsBufferDeviceAddressInfo, VkBufferDeviceAddressInfo, buffer);
SAME_VALUE(GS_ST_MEMORY_ALLOCATE_FLAGS_INFO, VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
SAME_VALUE(GS_ST_BUFFER_DEVICE_ADDRESS_INFO, VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
SAME_VALUE(GS_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT);
SAME_VALUE(GS_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT, VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
