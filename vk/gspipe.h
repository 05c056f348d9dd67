// Declarations for vkCreateComputePipelines, called from C so that the
// create-info structures live in memory this package owns for the whole
// call. (vulkan-go's CreateComputePipelines converts them into C memory
// that a finalizer may free while the driver still compiles the shader,
// which crashed lavapipe whenever a garbage collection ran during a
// pipeline creation.) The layouts are checked against the Khronos headers
// by testdata/pipeline_layout_check.c.

#ifndef GPUSCATTER_GSPIPE_H
#define GPUSCATTER_GSPIPE_H

#include <stddef.h>
#include <stdint.h>

#define GS_ST_PIPELINE_SHADER_STAGE_CREATE_INFO 18u
#define GS_ST_COMPUTE_PIPELINE_CREATE_INFO 29u
#define GS_SHADER_STAGE_COMPUTE_BIT 0x00000020u

// VkSpecializationMapEntry.
typedef struct gsSpecializationMapEntry {
	uint32_t constantID;
	uint32_t offset;
	size_t size;
} gsSpecializationMapEntry;

// VkSpecializationInfo.
typedef struct gsSpecializationInfo {
	uint32_t mapEntryCount;
	const gsSpecializationMapEntry* pMapEntries;
	size_t dataSize;
	const void* pData;
} gsSpecializationInfo;

// VkPipelineShaderStageCreateInfo; the module is a non-dispatchable handle.
typedef struct gsPipelineShaderStageCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t stage;
	uint64_t module;
	const char* pName;
	const gsSpecializationInfo* pSpecializationInfo;
} gsPipelineShaderStageCreateInfo;

// VkComputePipelineCreateInfo.
typedef struct gsComputePipelineCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	gsPipelineShaderStageCreateInfo stage;
	uint64_t layout;
	uint64_t basePipelineHandle;
	int32_t basePipelineIndex;
} gsComputePipelineCreateInfo;

int32_t gs_create_compute_pipeline(void* instance, void* device, uint64_t cache, uint64_t module,
	uint64_t layout, const char* entry, uint32_t nspec, const uint32_t* spec, uint64_t* pipeline);

#endif
