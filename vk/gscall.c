// The calls of gscall.h: each builds its structures on the C stack (or in
// the caller's C memory) and calls the entry point directly.

#include <stddef.h>
#include <stdlib.h>

#include "gsvk.h"
#include "gscall.h"

#define GS_ERROR_INITIALIZATION_FAILED (-3)
#define GS_ERROR_OUT_OF_HOST_MEMORY (-1)
#define GS_SHADER_STAGE_COMPUTE 0x20u

typedef void* (GSVK_CALL* gsGetDeviceProcAddrFn)(void* device, const char* name);
typedef void (GSVK_CALL* gsCmdPipelineBarrierFn)(void* cmd, uint32_t src, uint32_t dst, uint32_t deps,
	uint32_t nMem, const gsMemoryBarrier* mem, uint32_t nBuf, const void* buf, uint32_t nImg, const void* img);
typedef void (GSVK_CALL* gsCmdCopyBufferFn)(void* cmd, uint64_t src, uint64_t dst, uint32_t n, const gsBufferCopy* regions);
typedef int32_t (GSVK_CALL* gsQueueSubmitFn)(void* queue, uint32_t n, const gsSubmitInfo* submits, uint64_t fence);
typedef int32_t (GSVK_CALL* gsCreateDeviceFn)(void* physicalDevice, const gsDeviceCreateInfo* ci, const void* alloc, void** device);
typedef int32_t (GSVK_CALL* gsCreateDescriptorSetLayoutFn)(void* device, const gsDescriptorSetLayoutCreateInfo* ci,
	const void* alloc, uint64_t* layout);
typedef int32_t (GSVK_CALL* gsCreatePipelineLayoutFn)(void* device, const gsPipelineLayoutCreateInfo* ci,
	const void* alloc, uint64_t* layout);
typedef int32_t (GSVK_CALL* gsCreateDescriptorPoolFn)(void* device, const gsDescriptorPoolCreateInfo* ci,
	const void* alloc, uint64_t* pool);
typedef int32_t (GSVK_CALL* gsAllocateDescriptorSetsFn)(void* device, const gsDescriptorSetAllocateInfo* ai, uint64_t* sets);
typedef void (GSVK_CALL* gsUpdateDescriptorSetsFn)(void* device, uint32_t nWrites, const gsWriteDescriptorSet* writes,
	uint32_t nCopies, const void* copies);
typedef int32_t (GSVK_CALL* gsEnumerateInstanceLayerPropertiesFn)(uint32_t* count, gsLayerProperties* out);
typedef int32_t (GSVK_CALL* gsEnumerateInstanceExtensionPropertiesFn)(const char* layer, uint32_t* count,
	gsExtensionProperties* out);
typedef int32_t (GSVK_CALL* gsEnumerateDeviceExtensionPropertiesFn)(void* physicalDevice, const char* layer,
	uint32_t* count, gsExtensionProperties* out);
typedef void (GSVK_CALL* gsGetPhysicalDeviceQueueFamilyPropertiesFn)(void* physicalDevice, uint32_t* count,
	gsQueueFamilyProperties* out);

int gs_load_device_fns(void* instance, void* device, gsDeviceFns* f) {
	gsGetDeviceProcAddrFn gdpa = (gsGetDeviceProcAddrFn)gs_proc(instance, "vkGetDeviceProcAddr");
	if (gdpa == NULL) {
		return 0;
	}
	f->cmdPipelineBarrier = gdpa(device, "vkCmdPipelineBarrier");
	f->cmdCopyBuffer = gdpa(device, "vkCmdCopyBuffer");
	f->queueSubmit = gdpa(device, "vkQueueSubmit");
	f->createDescriptorSetLayout = gdpa(device, "vkCreateDescriptorSetLayout");
	f->createPipelineLayout = gdpa(device, "vkCreatePipelineLayout");
	f->createDescriptorPool = gdpa(device, "vkCreateDescriptorPool");
	f->allocateDescriptorSets = gdpa(device, "vkAllocateDescriptorSets");
	f->updateDescriptorSets = gdpa(device, "vkUpdateDescriptorSets");
	return f->cmdPipelineBarrier != NULL && f->cmdCopyBuffer != NULL && f->queueSubmit != NULL &&
		f->createDescriptorSetLayout != NULL && f->createPipelineLayout != NULL &&
		f->createDescriptorPool != NULL && f->allocateDescriptorSets != NULL && f->updateDescriptorSets != NULL;
}

void gs_cmd_memory_barrier(const gsDeviceFns* f, void* cmd, uint32_t srcStage, uint32_t dstStage,
	uint32_t srcAccess, uint32_t dstAccess) {
	gsMemoryBarrier b = {GS_ST_MEMORY_BARRIER, NULL, srcAccess, dstAccess};
	((gsCmdPipelineBarrierFn)f->cmdPipelineBarrier)(cmd, srcStage, dstStage, 0, 1, &b, 0, NULL, 0, NULL);
}

void gs_cmd_copy_buffer(const gsDeviceFns* f, void* cmd, uint64_t src, uint64_t dst,
	uint32_t count, const gsBufferCopy* regions) {
	((gsCmdCopyBufferFn)f->cmdCopyBuffer)(cmd, src, dst, count, regions);
}

int32_t gs_queue_submit(const gsDeviceFns* f, void* queue, void* cmd, uint64_t fence) {
	gsSubmitInfo si = {0};
	si.sType = GS_ST_SUBMIT_INFO;
	si.commandBufferCount = 1;
	si.pCommandBuffers = &cmd;
	return ((gsQueueSubmitFn)f->queueSubmit)(queue, 1, &si, fence);
}

typedef int32_t (GSVK_CALL* gsCreateInstanceFn)(const gsInstanceCreateInfo* ci, const void* alloc, void** instance);

int32_t gs_create_instance(const void* pNext, uint32_t flags, uint32_t apiVersion, uint32_t layerCount,
	const char* const* layers, uint32_t extensionCount, const char* const* extensions, void** instance) {
	gsCreateInstanceFn fn = (gsCreateInstanceFn)gs_proc(NULL, "vkCreateInstance");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	gsApplicationInfo app = {0};
	app.sType = GS_ST_APPLICATION_INFO;
	app.pApplicationName = "gpuscatter";
	app.applicationVersion = 1;
	app.pEngineName = "gpuscatter";
	app.engineVersion = 1;
	app.apiVersion = apiVersion;
	gsInstanceCreateInfo ci = {0};
	ci.sType = GS_ST_INSTANCE_CREATE_INFO;
	ci.pNext = pNext;
	ci.flags = flags;
	ci.pApplicationInfo = &app;
	ci.enabledLayerCount = layerCount;
	ci.ppEnabledLayerNames = layers;
	ci.enabledExtensionCount = extensionCount;
	ci.ppEnabledExtensionNames = extensions;
	return fn(&ci, NULL, instance);
}

int32_t gs_create_device(void* instance, void* physicalDevice, uint32_t queueFamily, const void* pNext,
	uint32_t extensionCount, const char* const* extensions, const gsPhysicalDeviceFeatures* features, void** device) {
	gsCreateDeviceFn fn = (gsCreateDeviceFn)gs_proc(instance, "vkCreateDevice");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	float priority = 1.0f;
	gsDeviceQueueCreateInfo q = {0};
	q.sType = GS_ST_DEVICE_QUEUE_CREATE_INFO;
	q.queueFamilyIndex = queueFamily;
	q.queueCount = 1;
	q.pQueuePriorities = &priority;
	gsDeviceCreateInfo ci = {0};
	ci.sType = GS_ST_DEVICE_CREATE_INFO;
	ci.pNext = pNext;
	ci.queueCreateInfoCount = 1;
	ci.pQueueCreateInfos = &q;
	ci.enabledExtensionCount = extensionCount;
	ci.ppEnabledExtensionNames = extensions;
	ci.pEnabledFeatures = features;
	return fn(physicalDevice, &ci, NULL, device);
}

int32_t gs_create_set_layout(const gsDeviceFns* f, void* device, uint32_t storageBuffers, uint64_t* layout) {
	gsDescriptorSetLayoutBinding* bindings = NULL;
	if (storageBuffers > 0) {
		bindings = (gsDescriptorSetLayoutBinding*)calloc(storageBuffers, sizeof(gsDescriptorSetLayoutBinding));
		if (bindings == NULL) {
			return GS_ERROR_OUT_OF_HOST_MEMORY;
		}
	}
	for (uint32_t i = 0; i < storageBuffers; i++) {
		bindings[i].binding = i;
		bindings[i].descriptorType = GS_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		bindings[i].descriptorCount = 1;
		bindings[i].stageFlags = GS_SHADER_STAGE_COMPUTE;
	}
	gsDescriptorSetLayoutCreateInfo ci = {0};
	ci.sType = GS_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
	ci.bindingCount = storageBuffers;
	ci.pBindings = bindings;
	int32_t r = ((gsCreateDescriptorSetLayoutFn)f->createDescriptorSetLayout)(device, &ci, NULL, layout);
	free(bindings);
	return r;
}

int32_t gs_create_pipeline_layout(const gsDeviceFns* f, void* device, uint64_t setLayout, uint32_t pushSize,
	uint64_t* layout) {
	gsPushConstantRange range = {GS_SHADER_STAGE_COMPUTE, 0, pushSize};
	gsPipelineLayoutCreateInfo ci = {0};
	ci.sType = GS_ST_PIPELINE_LAYOUT_CREATE_INFO;
	ci.setLayoutCount = 1;
	ci.pSetLayouts = &setLayout;
	if (pushSize > 0) {
		ci.pushConstantRangeCount = 1;
		ci.pPushConstantRanges = &range;
	}
	return ((gsCreatePipelineLayoutFn)f->createPipelineLayout)(device, &ci, NULL, layout);
}

int32_t gs_create_descriptor_pool(const gsDeviceFns* f, void* device, uint32_t maxSets, uint32_t descriptors,
	uint64_t* pool) {
	gsDescriptorPoolSize size = {GS_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
	gsDescriptorPoolCreateInfo ci = {0};
	ci.sType = GS_ST_DESCRIPTOR_POOL_CREATE_INFO;
	ci.maxSets = maxSets;
	ci.poolSizeCount = 1;
	ci.pPoolSizes = &size;
	return ((gsCreateDescriptorPoolFn)f->createDescriptorPool)(device, &ci, NULL, pool);
}

int32_t gs_allocate_descriptor_set(const gsDeviceFns* f, void* device, uint64_t pool, uint64_t setLayout,
	uint64_t* set) {
	gsDescriptorSetAllocateInfo ai = {0};
	ai.sType = GS_ST_DESCRIPTOR_SET_ALLOCATE_INFO;
	ai.descriptorPool = pool;
	ai.descriptorSetCount = 1;
	ai.pSetLayouts = &setLayout;
	return ((gsAllocateDescriptorSetsFn)f->allocateDescriptorSets)(device, &ai, set);
}

int32_t gs_write_storage_buffers(const gsDeviceFns* f, void* device, uint64_t set, uint32_t n,
	const gsDescriptorBufferInfo* infos) {
	gsWriteDescriptorSet* writes = (gsWriteDescriptorSet*)calloc(n > 0 ? n : 1, sizeof(gsWriteDescriptorSet));
	if (writes == NULL) {
		return GS_ERROR_OUT_OF_HOST_MEMORY;
	}
	for (uint32_t i = 0; i < n; i++) {
		writes[i].sType = GS_ST_WRITE_DESCRIPTOR_SET;
		writes[i].dstSet = set;
		writes[i].dstBinding = i;
		writes[i].descriptorCount = 1;
		writes[i].descriptorType = GS_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		writes[i].pBufferInfo = &infos[i];
	}
	((gsUpdateDescriptorSetsFn)f->updateDescriptorSets)(device, n, writes, 0, NULL);
	free(writes);
	return 0;
}

int32_t gs_instance_layers(uint32_t* count, gsLayerProperties* out) {
	gsEnumerateInstanceLayerPropertiesFn fn =
		(gsEnumerateInstanceLayerPropertiesFn)gs_proc(NULL, "vkEnumerateInstanceLayerProperties");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	return fn(count, out);
}

int32_t gs_instance_extensions(const char* layer, uint32_t* count, gsExtensionProperties* out) {
	gsEnumerateInstanceExtensionPropertiesFn fn =
		(gsEnumerateInstanceExtensionPropertiesFn)gs_proc(NULL, "vkEnumerateInstanceExtensionProperties");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	return fn(layer, count, out);
}

int32_t gs_device_extensions(void* instance, void* physicalDevice, uint32_t* count, gsExtensionProperties* out) {
	gsEnumerateDeviceExtensionPropertiesFn fn =
		(gsEnumerateDeviceExtensionPropertiesFn)gs_proc(instance, "vkEnumerateDeviceExtensionProperties");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	return fn(physicalDevice, NULL, count, out);
}

int32_t gs_queue_families(void* instance, void* physicalDevice, uint32_t* count, gsQueueFamilyProperties* out) {
	gsGetPhysicalDeviceQueueFamilyPropertiesFn fn =
		(gsGetPhysicalDeviceQueueFamilyPropertiesFn)gs_proc(instance, "vkGetPhysicalDeviceQueueFamilyProperties");
	if (fn == NULL) {
		return GS_ERROR_INITIALIZATION_FAILED;
	}
	fn(physicalDevice, count, out);
	return 0;
}
