// Adopting a device another program created (gsadopt.h).

#include <stdlib.h>
#include <string.h>

#include "gsvk.h"
#include "gsadopt.h"
#include "gscall.h"

// The start of every structure of a pNext chain.
typedef struct gsBase {
	uint32_t sType;
	const void* pNext;
} gsBase;

static void gs_read_core(const gsBool32* f, gsEnabled* out) {
	if (f == NULL) {
		return;
	}
	out->f[GS_EN_SHADER_FLOAT64] |= f[GS_FEATURE_SHADER_FLOAT64];
	out->f[GS_EN_SHADER_INT64] |= f[GS_FEATURE_SHADER_INT64];
	out->f[GS_EN_SHADER_INT16] |= f[GS_FEATURE_SHADER_INT16];
}

void gs_read_create_info(const void* createInfo, gsEnabled* out, uint32_t* extensionCount, const char* const** extensions) {
	memset(out, 0, sizeof(*out));
	const gsDeviceCreateInfo* ci = (const gsDeviceCreateInfo*)createInfo;
	*extensionCount = ci->enabledExtensionCount;
	*extensions = ci->ppEnabledExtensionNames;
	gs_read_core(ci->pEnabledFeatures == NULL ? NULL : ci->pEnabledFeatures->f, out);
	for (const gsBase* s = (const gsBase*)ci->pNext; s != NULL; s = (const gsBase*)s->pNext) {
		const gsBools* v = (const gsBools*)s;
		switch (s->sType) {
		case GS_ST_PHYSICAL_DEVICE_FEATURES_2:
			gs_read_core(((const gsPhysicalDeviceFeatures2*)s)->features, out);
			break;
		case GS_ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
			out->f[GS_EN_STORAGE16] |= v->b[GS_V11_STORAGE16];
			break;
		case GS_ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES:
			out->f[GS_EN_STORAGE8] |= v->b[GS_V12_STORAGE8];
			out->f[GS_EN_BUF_I64_ATOMICS] |= v->b[GS_V12_BUF_I64_ATOMICS];
			out->f[GS_EN_SHARED_I64_ATOMICS] |= v->b[GS_V12_SHARED_I64_ATOMICS];
			out->f[GS_EN_SHADER_FLOAT16] |= v->b[GS_V12_FLOAT16];
			out->f[GS_EN_SHADER_INT8] |= v->b[GS_V12_INT8];
			out->f[GS_EN_TIMELINE] |= v->b[GS_V12_TIMELINE];
			out->f[GS_EN_BDA] |= v->b[GS_V12_BDA];
			break;
		case GS_ST_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
			out->f[GS_EN_TIMELINE] |= v->b[0];
			break;
		case GS_ST_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
			out->f[GS_EN_STORAGE8] |= v->b[0];
			break;
		case GS_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
			out->f[GS_EN_STORAGE16] |= v->b[0];
			break;
		case GS_ST_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
			out->f[GS_EN_SHADER_FLOAT16] |= v->b[0];
			out->f[GS_EN_SHADER_INT8] |= v->b[1];
			break;
		case GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES:
			out->f[GS_EN_BUF_I64_ATOMICS] |= v->b[0];
			out->f[GS_EN_SHARED_I64_ATOMICS] |= v->b[1];
			break;
		case GS_ST_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
			out->f[GS_EN_BDA] |= v->b[0];
			break;
		case GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT: {
			const gsPhysicalDeviceShaderAtomicFloatFeaturesEXT* a = (const gsPhysicalDeviceShaderAtomicFloatFeaturesEXT*)s;
			out->f[GS_EN_BUF_F32_ATOMICS] |= a->shaderBufferFloat32Atomics;
			out->f[GS_EN_BUF_F32_ADD] |= a->shaderBufferFloat32AtomicAdd;
			out->f[GS_EN_BUF_F64_ATOMICS] |= a->shaderBufferFloat64Atomics;
			out->f[GS_EN_BUF_F64_ADD] |= a->shaderBufferFloat64AtomicAdd;
			out->f[GS_EN_SHARED_F32_ADD] |= a->shaderSharedFloat32AtomicAdd;
			break;
		}
		case GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT: {
			const gsPhysicalDeviceShaderAtomicFloat2FeaturesEXT* a = (const gsPhysicalDeviceShaderAtomicFloat2FeaturesEXT*)s;
			out->f[GS_EN_BUF_F16_ATOMICS] |= a->shaderBufferFloat16Atomics;
			out->f[GS_EN_BUF_F16_ADD] |= a->shaderBufferFloat16AtomicAdd;
			out->f[GS_EN_BUF_F16_MINMAX] |= a->shaderBufferFloat16AtomicMinMax;
			out->f[GS_EN_BUF_F32_MINMAX] |= a->shaderBufferFloat32AtomicMinMax;
			out->f[GS_EN_BUF_F64_MINMAX] |= a->shaderBufferFloat64AtomicMinMax;
			break;
		}
		}
	}
}

typedef void (GSVK_CALL* gsGetFeatures2)(void* physicalDevice, void* features);

int gs_timeline_supported(void* instance, void* physicalDevice) {
	gsGetFeatures2 fn = (gsGetFeatures2)gs_proc(instance, "vkGetPhysicalDeviceFeatures2");
	if (fn == NULL) {
		return 0;
	}
	gsPhysicalDeviceTimelineSemaphoreFeatures t = {GS_ST_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, NULL, 0};
	gsPhysicalDeviceFeatures2 f2;
	memset(&f2, 0, sizeof(f2));
	f2.sType = GS_ST_PHYSICAL_DEVICE_FEATURES_2;
	f2.pNext = &t;
	fn(physicalDevice, &f2);
	return t.timelineSemaphore != 0;
}

void* gs_link_request(gsRequestChain* c, uint32_t mask, int timeline) {
	gs_link_features(&c->c, mask);
	if (timeline) {
		c->timeline.sType = GS_ST_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
		c->timeline.pNext = c->c.features2.pNext;
		c->timeline.timelineSemaphore = 1;
		c->c.features2.pNext = &c->timeline;
	}
	return &c->c.features2;
}

typedef int32_t (GSVK_CALL* gsQueueSubmit)(void* queue, uint32_t count, const gsSubmitInfo* submits, uint64_t fence);

#define GS_STAGE_ALL_COMMANDS 0x00010000u

int32_t gs_queue_submit_timeline(void* instance, void* queue, void* cmd, uint64_t fence,
	uint32_t waitCount, const uint64_t* waitSemaphores, const uint64_t* waitValues,
	uint32_t signalCount, const uint64_t* signalSemaphores, const uint64_t* signalValues) {
	gsQueueSubmit fn = (gsQueueSubmit)gs_proc(instance, "vkQueueSubmit");
	if (fn == NULL) {
		return -3; // VK_ERROR_INITIALIZATION_FAILED
	}
	uint32_t* stages = NULL;
	if (waitCount > 0) {
		stages = (uint32_t*)calloc(waitCount, sizeof(uint32_t));
		if (stages == NULL) {
			return -1; // VK_ERROR_OUT_OF_HOST_MEMORY
		}
		for (uint32_t i = 0; i < waitCount; i++) {
			stages[i] = GS_STAGE_ALL_COMMANDS;
		}
	}
	gsTimelineSemaphoreSubmitInfo t = {GS_ST_TIMELINE_SEMAPHORE_SUBMIT_INFO, NULL, waitCount, waitValues, signalCount, signalValues};
	gsSubmitInfo si = {GS_ST_SUBMIT_INFO, &t, waitCount, waitSemaphores, stages, 1, &cmd, signalCount, signalSemaphores};
	int32_t r = fn(queue, 1, &si, fence);
	free(stages);
	return r;
}
