// vkCreateComputePipelines with create-info structures on the C stack (see
// gspipe.h), loaded through vkGetDeviceProcAddr.

#include <stdlib.h>

#include "gsvk.h"
#include "gspipe.h"

typedef void* (GSVK_CALL* gsGetDeviceProcAddrFn)(void* device, const char* name);
typedef int32_t (GSVK_CALL* gsCreateComputePipelines)(void* device, uint64_t cache, uint32_t count,
	const gsComputePipelineCreateInfo* infos, const void* allocator, uint64_t* pipelines);

// VK_ERROR_INITIALIZATION_FAILED and VK_ERROR_OUT_OF_HOST_MEMORY.
#define GS_ERROR_INITIALIZATION_FAILED (-3)
#define GS_ERROR_OUT_OF_HOST_MEMORY (-1)

// gs_create_compute_pipeline creates one compute pipeline whose
// specialization constants 0 ... nspec-1 take the 4-byte values spec.
int32_t gs_create_compute_pipeline(void* instance, void* device, uint64_t cache, uint64_t module,
	uint64_t layout, const char* entry, uint32_t nspec, const uint32_t* spec, uint64_t* pipeline) {
	gsGetDeviceProcAddrFn gdpa = (gsGetDeviceProcAddrFn)gs_proc(instance, "vkGetDeviceProcAddr");
	if (gdpa == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	gsCreateComputePipelines fn = (gsCreateComputePipelines)gdpa(device, "vkCreateComputePipelines");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	gsSpecializationMapEntry* entries = NULL;
	gsSpecializationInfo info = {0};
	gsComputePipelineCreateInfo ci = {0};
	if (nspec > 0) {
		entries = (gsSpecializationMapEntry*)calloc(nspec, sizeof(gsSpecializationMapEntry));
		if (entries == NULL) {
			return GS_ERROR_OUT_OF_HOST_MEMORY;
		}
		for (uint32_t i = 0; i < nspec; i++) {
			entries[i].constantID = i;
			entries[i].offset = 4u * i;
			entries[i].size = 4;
		}
		info.mapEntryCount = nspec;
		info.pMapEntries = entries;
		info.dataSize = 4u * (size_t)nspec;
		info.pData = spec;
		ci.stage.pSpecializationInfo = &info;
	}
	ci.sType = GS_ST_COMPUTE_PIPELINE_CREATE_INFO;
	ci.stage.sType = GS_ST_PIPELINE_SHADER_STAGE_CREATE_INFO;
	ci.stage.stage = GS_SHADER_STAGE_COMPUTE_BIT;
	ci.stage.module = module;
	ci.stage.pName = entry;
	ci.layout = layout;
	ci.basePipelineIndex = -1;
	int32_t r = fn(device, cache, 1, &ci, NULL, pipeline);
	free(entries);
	return r;
}
