/*
 * Compile-time check that gscall.h matches the Khronos headers. Built by
 * TestCallLayouts with the system's Vulkan headers (Debian package
 * libvulkan-dev); nothing here is linked into the package.
 */
#include <stddef.h>
#include <vulkan/vulkan.h>

#include "../gscall.h"

#include "layout_check.h"

SAME_SIZE(gsApplicationInfo, VkApplicationInfo);
SAME_OFFSET(gsApplicationInfo, VkApplicationInfo, pApplicationName);
SAME_OFFSET(gsApplicationInfo, VkApplicationInfo, applicationVersion);
SAME_OFFSET(gsApplicationInfo, VkApplicationInfo, pEngineName);
SAME_OFFSET(gsApplicationInfo, VkApplicationInfo, engineVersion);
SAME_OFFSET(gsApplicationInfo, VkApplicationInfo, apiVersion);
SAME_SIZE(gsInstanceCreateInfo, VkInstanceCreateInfo);
SAME_OFFSET(gsInstanceCreateInfo, VkInstanceCreateInfo, flags);
SAME_OFFSET(gsInstanceCreateInfo, VkInstanceCreateInfo, pApplicationInfo);
SAME_OFFSET(gsInstanceCreateInfo, VkInstanceCreateInfo, enabledLayerCount);
SAME_OFFSET(gsInstanceCreateInfo, VkInstanceCreateInfo, ppEnabledLayerNames);
SAME_OFFSET(gsInstanceCreateInfo, VkInstanceCreateInfo, enabledExtensionCount);
SAME_OFFSET(gsInstanceCreateInfo, VkInstanceCreateInfo, ppEnabledExtensionNames);

SAME_SIZE(gsMemoryBarrier, VkMemoryBarrier);
SAME_OFFSET(gsMemoryBarrier, VkMemoryBarrier, srcAccessMask);
SAME_OFFSET(gsMemoryBarrier, VkMemoryBarrier, dstAccessMask);
SAME_SIZE(gsBufferCopy, VkBufferCopy);
SAME_OFFSET(gsBufferCopy, VkBufferCopy, dstOffset);
SAME_OFFSET(gsBufferCopy, VkBufferCopy, size);
SAME_SIZE(gsSubmitInfo, VkSubmitInfo);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, waitSemaphoreCount);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, pWaitSemaphores);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, pWaitDstStageMask);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, commandBufferCount);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, pCommandBuffers);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, signalSemaphoreCount);
SAME_OFFSET(gsSubmitInfo, VkSubmitInfo, pSignalSemaphores);

SAME_SIZE(gsDeviceQueueCreateInfo, VkDeviceQueueCreateInfo);
SAME_OFFSET(gsDeviceQueueCreateInfo, VkDeviceQueueCreateInfo, flags);
SAME_OFFSET(gsDeviceQueueCreateInfo, VkDeviceQueueCreateInfo, queueFamilyIndex);
SAME_OFFSET(gsDeviceQueueCreateInfo, VkDeviceQueueCreateInfo, queueCount);
SAME_OFFSET(gsDeviceQueueCreateInfo, VkDeviceQueueCreateInfo, pQueuePriorities);
SAME_SIZE(gsPhysicalDeviceFeatures, VkPhysicalDeviceFeatures);
SAME_VALUE(GS_FEATURE_VERTEX_PIPELINE_STORES_AND_ATOMICS * 4, offsetof(VkPhysicalDeviceFeatures, vertexPipelineStoresAndAtomics));
SAME_VALUE(GS_FEATURE_FRAGMENT_STORES_AND_ATOMICS * 4, offsetof(VkPhysicalDeviceFeatures, fragmentStoresAndAtomics));
SAME_VALUE(GS_FEATURE_SHADER_FLOAT64 * 4, offsetof(VkPhysicalDeviceFeatures, shaderFloat64));
SAME_VALUE(GS_FEATURE_SHADER_INT64 * 4, offsetof(VkPhysicalDeviceFeatures, shaderInt64));
SAME_VALUE(GS_FEATURE_SHADER_INT16 * 4, offsetof(VkPhysicalDeviceFeatures, shaderInt16));
SAME_SIZE(gsDeviceCreateInfo, VkDeviceCreateInfo);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, flags);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, queueCreateInfoCount);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, pQueueCreateInfos);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, enabledLayerCount);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, ppEnabledLayerNames);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, enabledExtensionCount);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, ppEnabledExtensionNames);
SAME_OFFSET(gsDeviceCreateInfo, VkDeviceCreateInfo, pEnabledFeatures);

SAME_SIZE(gsDescriptorSetLayoutBinding, VkDescriptorSetLayoutBinding);
SAME_OFFSET(gsDescriptorSetLayoutBinding, VkDescriptorSetLayoutBinding, descriptorType);
SAME_OFFSET(gsDescriptorSetLayoutBinding, VkDescriptorSetLayoutBinding, descriptorCount);
SAME_OFFSET(gsDescriptorSetLayoutBinding, VkDescriptorSetLayoutBinding, stageFlags);
SAME_OFFSET(gsDescriptorSetLayoutBinding, VkDescriptorSetLayoutBinding, pImmutableSamplers);
SAME_SIZE(gsDescriptorSetLayoutCreateInfo, VkDescriptorSetLayoutCreateInfo);
SAME_OFFSET(gsDescriptorSetLayoutCreateInfo, VkDescriptorSetLayoutCreateInfo, flags);
SAME_OFFSET(gsDescriptorSetLayoutCreateInfo, VkDescriptorSetLayoutCreateInfo, bindingCount);
SAME_OFFSET(gsDescriptorSetLayoutCreateInfo, VkDescriptorSetLayoutCreateInfo, pBindings);
SAME_SIZE(gsPushConstantRange, VkPushConstantRange);
SAME_OFFSET(gsPushConstantRange, VkPushConstantRange, offset);
SAME_OFFSET(gsPushConstantRange, VkPushConstantRange, size);
SAME_SIZE(gsPipelineLayoutCreateInfo, VkPipelineLayoutCreateInfo);
SAME_OFFSET(gsPipelineLayoutCreateInfo, VkPipelineLayoutCreateInfo, flags);
SAME_OFFSET(gsPipelineLayoutCreateInfo, VkPipelineLayoutCreateInfo, setLayoutCount);
SAME_OFFSET(gsPipelineLayoutCreateInfo, VkPipelineLayoutCreateInfo, pSetLayouts);
SAME_OFFSET(gsPipelineLayoutCreateInfo, VkPipelineLayoutCreateInfo, pushConstantRangeCount);
SAME_OFFSET(gsPipelineLayoutCreateInfo, VkPipelineLayoutCreateInfo, pPushConstantRanges);
SAME_SIZE(gsDescriptorPoolSize, VkDescriptorPoolSize);
SAME_OFFSET(gsDescriptorPoolSize, VkDescriptorPoolSize, descriptorCount);
SAME_SIZE(gsDescriptorPoolCreateInfo, VkDescriptorPoolCreateInfo);
SAME_OFFSET(gsDescriptorPoolCreateInfo, VkDescriptorPoolCreateInfo, flags);
SAME_OFFSET(gsDescriptorPoolCreateInfo, VkDescriptorPoolCreateInfo, maxSets);
SAME_OFFSET(gsDescriptorPoolCreateInfo, VkDescriptorPoolCreateInfo, poolSizeCount);
SAME_OFFSET(gsDescriptorPoolCreateInfo, VkDescriptorPoolCreateInfo, pPoolSizes);
SAME_SIZE(gsDescriptorSetAllocateInfo, VkDescriptorSetAllocateInfo);
SAME_OFFSET(gsDescriptorSetAllocateInfo, VkDescriptorSetAllocateInfo, descriptorPool);
SAME_OFFSET(gsDescriptorSetAllocateInfo, VkDescriptorSetAllocateInfo, descriptorSetCount);
SAME_OFFSET(gsDescriptorSetAllocateInfo, VkDescriptorSetAllocateInfo, pSetLayouts);
SAME_SIZE(gsDescriptorBufferInfo, VkDescriptorBufferInfo);
SAME_OFFSET(gsDescriptorBufferInfo, VkDescriptorBufferInfo, offset);
SAME_OFFSET(gsDescriptorBufferInfo, VkDescriptorBufferInfo, range);
SAME_SIZE(gsWriteDescriptorSet, VkWriteDescriptorSet);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, dstSet);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, dstBinding);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, dstArrayElement);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, descriptorCount);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, descriptorType);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, pImageInfo);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, pBufferInfo);
SAME_OFFSET(gsWriteDescriptorSet, VkWriteDescriptorSet, pTexelBufferView);

SAME_SIZE(gsExtensionProperties, VkExtensionProperties);
SAME_OFFSET(gsExtensionProperties, VkExtensionProperties, specVersion);
SAME_SIZE(gsLayerProperties, VkLayerProperties);
SAME_OFFSET(gsLayerProperties, VkLayerProperties, specVersion);
SAME_OFFSET(gsLayerProperties, VkLayerProperties, implementationVersion);
SAME_OFFSET(gsLayerProperties, VkLayerProperties, description);
SAME_SIZE(gsQueueFamilyProperties, VkQueueFamilyProperties);
SAME_OFFSET(gsQueueFamilyProperties, VkQueueFamilyProperties, queueCount);
SAME_OFFSET(gsQueueFamilyProperties, VkQueueFamilyProperties, timestampValidBits);
SAME_OFFSET(gsQueueFamilyProperties, VkQueueFamilyProperties, minImageTransferGranularity);

SAME_VALUE(GS_ST_APPLICATION_INFO, VK_STRUCTURE_TYPE_APPLICATION_INFO);
SAME_VALUE(GS_ST_INSTANCE_CREATE_INFO, VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
SAME_VALUE(GS_ST_SUBMIT_INFO, VK_STRUCTURE_TYPE_SUBMIT_INFO);
SAME_VALUE(GS_ST_MEMORY_BARRIER, VK_STRUCTURE_TYPE_MEMORY_BARRIER);
SAME_VALUE(GS_ST_DEVICE_QUEUE_CREATE_INFO, VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
SAME_VALUE(GS_ST_DEVICE_CREATE_INFO, VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
SAME_VALUE(GS_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
SAME_VALUE(GS_ST_PIPELINE_LAYOUT_CREATE_INFO, VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
SAME_VALUE(GS_ST_DESCRIPTOR_POOL_CREATE_INFO, VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
SAME_VALUE(GS_ST_DESCRIPTOR_SET_ALLOCATE_INFO, VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
SAME_VALUE(GS_ST_WRITE_DESCRIPTOR_SET, VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
SAME_VALUE(GS_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
SAME_VALUE(GS_INCOMPLETE, VK_INCOMPLETE);
_Static_assert(sizeof(VkCommandBuffer) == sizeof(void*), "dispatchable handles are pointers");
_Static_assert(sizeof(VkFence) == sizeof(uint64_t), "non-dispatchable handles are 64-bit");
