/*
 * Compile-time check that gsadopt.h matches the Khronos headers. Built by
 * TestHeaderLayouts with the system's Vulkan headers (Debian package
 * libvulkan-dev); nothing here is linked into the package.
 */
#include <stddef.h>
#include <vulkan/vulkan.h>

#include "../gsadopt.h"

#include "layout_check.h"

#define V11(m) (offsetof(VkPhysicalDeviceVulkan11Features, m) - offsetof(VkPhysicalDeviceVulkan11Features, storageBuffer16BitAccess))
#define V12(m) (offsetof(VkPhysicalDeviceVulkan12Features, m) - offsetof(VkPhysicalDeviceVulkan12Features, samplerMirrorClampToEdge))

SAME_VALUE(offsetof(gsBools, b), offsetof(VkPhysicalDeviceVulkan12Features, samplerMirrorClampToEdge));
SAME_VALUE(offsetof(gsBools, b), offsetof(VkPhysicalDeviceVulkan11Features, storageBuffer16BitAccess));
SAME_VALUE(4 * GS_V11_STORAGE16, V11(storageBuffer16BitAccess));
SAME_VALUE(4 * GS_V12_STORAGE8, V12(storageBuffer8BitAccess));
SAME_VALUE(4 * GS_V12_BUF_I64_ATOMICS, V12(shaderBufferInt64Atomics));
SAME_VALUE(4 * GS_V12_SHARED_I64_ATOMICS, V12(shaderSharedInt64Atomics));
SAME_VALUE(4 * GS_V12_FLOAT16, V12(shaderFloat16));
SAME_VALUE(4 * GS_V12_INT8, V12(shaderInt8));
SAME_VALUE(4 * GS_V12_TIMELINE, V12(timelineSemaphore));
SAME_VALUE(4 * GS_V12_BDA, V12(bufferDeviceAddress));
SAME_VALUE(GS_ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
SAME_VALUE(GS_ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
SAME_VALUE(GS_ST_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES);
SAME_VALUE(GS_ST_SEMAPHORE_TYPE_CREATE_INFO, VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
SAME_VALUE(GS_ST_TIMELINE_SEMAPHORE_SUBMIT_INFO, VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
SAME_VALUE(GS_ST_SUBMIT_INFO, VK_STRUCTURE_TYPE_SUBMIT_INFO);

SAME_SIZE(gsPhysicalDeviceTimelineSemaphoreFeatures, VkPhysicalDeviceTimelineSemaphoreFeatures);
SAME_OFFSET(gsPhysicalDeviceTimelineSemaphoreFeatures, VkPhysicalDeviceTimelineSemaphoreFeatures, timelineSemaphore);

SAME_SIZE(gsTimelineSemaphoreSubmitInfo, VkTimelineSemaphoreSubmitInfo);
SAME_OFFSET(gsTimelineSemaphoreSubmitInfo, VkTimelineSemaphoreSubmitInfo, waitSemaphoreValueCount);
SAME_OFFSET(gsTimelineSemaphoreSubmitInfo, VkTimelineSemaphoreSubmitInfo, pWaitSemaphoreValues);
SAME_OFFSET(gsTimelineSemaphoreSubmitInfo, VkTimelineSemaphoreSubmitInfo, signalSemaphoreValueCount);
SAME_OFFSET(gsTimelineSemaphoreSubmitInfo, VkTimelineSemaphoreSubmitInfo, pSignalSemaphoreValues);
