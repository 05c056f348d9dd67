/*
 * Compile-time check that gspipe.h matches the Khronos headers. Built by
 * TestPipelineLayouts with the system's Vulkan headers (Debian package
 * libvulkan-dev); nothing here is linked into the package.
 */
#include <stddef.h>
#include <vulkan/vulkan.h>

#include "../gspipe.h"

#include "layout_check.h"

SAME_SIZE(gsSpecializationMapEntry, VkSpecializationMapEntry);
SAME_OFFSET(gsSpecializationMapEntry, VkSpecializationMapEntry, offset);
SAME_OFFSET(gsSpecializationMapEntry, VkSpecializationMapEntry, size);
SAME_SIZE(gsSpecializationInfo, VkSpecializationInfo);
SAME_OFFSET(gsSpecializationInfo, VkSpecializationInfo, pMapEntries);
SAME_OFFSET(gsSpecializationInfo, VkSpecializationInfo, dataSize);
SAME_OFFSET(gsSpecializationInfo, VkSpecializationInfo, pData);
SAME_SIZE(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo);
SAME_OFFSET(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo, pNext);
SAME_OFFSET(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo, flags);
SAME_OFFSET(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo, stage);
SAME_OFFSET(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo, module);
SAME_OFFSET(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo, pName);
SAME_OFFSET(gsPipelineShaderStageCreateInfo, VkPipelineShaderStageCreateInfo, pSpecializationInfo);
SAME_SIZE(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo);
SAME_OFFSET(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo, pNext);
SAME_OFFSET(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo, flags);
SAME_OFFSET(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo, stage);
SAME_OFFSET(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo, layout);
SAME_OFFSET(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo, basePipelineHandle);
SAME_OFFSET(gsComputePipelineCreateInfo, VkComputePipelineCreateInfo, basePipelineIndex);
SAME_VALUE(GS_ST_PIPELINE_SHADER_STAGE_CREATE_INFO, VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
SAME_VALUE(GS_ST_COMPUTE_PIPELINE_CREATE_INFO, VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
SAME_VALUE(GS_SHADER_STAGE_COMPUTE_BIT, VK_SHADER_STAGE_COMPUTE_BIT);
_Static_assert(sizeof(VkPipeline) == sizeof(uint64_t), "non-dispatchable handles are 64-bit");
