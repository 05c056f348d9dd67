/*
 * Compile-time check that gsaddr.h matches the Khronos headers. Built by
 * TestAddressLayouts with the system's Vulkan headers (Debian package
 * libvulkan-dev); nothing here is linked into the package.
 */
#include <stddef.h>
#include <vulkan/vulkan.h>

#include "../gsaddr.h"

#include "layout_check.h"

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
