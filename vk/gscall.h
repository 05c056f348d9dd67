// Vulkan calls whose arguments hold arrays of structures, made from C so
// that every structure lives in memory this package owns for the whole
// call. vulkan-go converts such arrays into C memory guarded by a
// finalizer on a temporary that is unreachable as soon as the conversion
// returns: a garbage collection during the call may free the array while
// the driver reads it (or, for output arrays, writes it). The layouts are
// checked against the Khronos headers by testdata/call_layout_check.c.

#ifndef GPUSCATTER_GSCALL_H
#define GPUSCATTER_GSCALL_H

#include <stddef.h>
#include <stdint.h>

#define GS_ST_APPLICATION_INFO 0u
#define GS_ST_INSTANCE_CREATE_INFO 1u
#define GS_ST_SUBMIT_INFO 4u
#define GS_ST_MEMORY_BARRIER 46u
#define GS_ST_DEVICE_QUEUE_CREATE_INFO 2u
#define GS_ST_DEVICE_CREATE_INFO 3u
#define GS_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO 32u
#define GS_ST_PIPELINE_LAYOUT_CREATE_INFO 30u
#define GS_ST_DESCRIPTOR_POOL_CREATE_INFO 33u
#define GS_ST_DESCRIPTOR_SET_ALLOCATE_INFO 34u
#define GS_ST_WRITE_DESCRIPTOR_SET 35u
#define GS_DESCRIPTOR_TYPE_STORAGE_BUFFER 7u
#define GS_INCOMPLETE 5

typedef struct gsApplicationInfo {
	uint32_t sType;
	const void* pNext;
	const char* pApplicationName;
	uint32_t applicationVersion;
	const char* pEngineName;
	uint32_t engineVersion;
	uint32_t apiVersion;
} gsApplicationInfo;

typedef struct gsInstanceCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	const gsApplicationInfo* pApplicationInfo;
	uint32_t enabledLayerCount;
	const char* const* ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char* const* ppEnabledExtensionNames;
} gsInstanceCreateInfo;

typedef struct gsMemoryBarrier {
	uint32_t sType;
	const void* pNext;
	uint32_t srcAccessMask;
	uint32_t dstAccessMask;
} gsMemoryBarrier;

typedef struct gsBufferCopy {
	uint64_t srcOffset;
	uint64_t dstOffset;
	uint64_t size;
} gsBufferCopy;

typedef struct gsSubmitInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t waitSemaphoreCount;
	const uint64_t* pWaitSemaphores;
	const uint32_t* pWaitDstStageMask;
	uint32_t commandBufferCount;
	void* const* pCommandBuffers;
	uint32_t signalSemaphoreCount;
	const uint64_t* pSignalSemaphores;
} gsSubmitInfo;

typedef struct gsDeviceQueueCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t queueFamilyIndex;
	uint32_t queueCount;
	const float* pQueuePriorities;
} gsDeviceQueueCreateInfo;

// VkPhysicalDeviceFeatures: 55 VkBool32 in the order of the specification.
#define GS_FEATURE_VERTEX_PIPELINE_STORES_AND_ATOMICS 25
#define GS_FEATURE_FRAGMENT_STORES_AND_ATOMICS 26
#define GS_FEATURE_SHADER_FLOAT64 39
#define GS_FEATURE_SHADER_INT64 40
#define GS_FEATURE_SHADER_INT16 41
typedef struct gsPhysicalDeviceFeatures {
	uint32_t f[55];
} gsPhysicalDeviceFeatures;

typedef struct gsDeviceCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t queueCreateInfoCount;
	const gsDeviceQueueCreateInfo* pQueueCreateInfos;
	uint32_t enabledLayerCount;
	const char* const* ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char* const* ppEnabledExtensionNames;
	const gsPhysicalDeviceFeatures* pEnabledFeatures;
} gsDeviceCreateInfo;

typedef struct gsDescriptorSetLayoutBinding {
	uint32_t binding;
	uint32_t descriptorType;
	uint32_t descriptorCount;
	uint32_t stageFlags;
	const void* pImmutableSamplers;
} gsDescriptorSetLayoutBinding;

typedef struct gsDescriptorSetLayoutCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t bindingCount;
	const gsDescriptorSetLayoutBinding* pBindings;
} gsDescriptorSetLayoutCreateInfo;

typedef struct gsPushConstantRange {
	uint32_t stageFlags;
	uint32_t offset;
	uint32_t size;
} gsPushConstantRange;

typedef struct gsPipelineLayoutCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t setLayoutCount;
	const uint64_t* pSetLayouts;
	uint32_t pushConstantRangeCount;
	const gsPushConstantRange* pPushConstantRanges;
} gsPipelineLayoutCreateInfo;

typedef struct gsDescriptorPoolSize {
	uint32_t type;
	uint32_t descriptorCount;
} gsDescriptorPoolSize;

typedef struct gsDescriptorPoolCreateInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t maxSets;
	uint32_t poolSizeCount;
	const gsDescriptorPoolSize* pPoolSizes;
} gsDescriptorPoolCreateInfo;

typedef struct gsDescriptorSetAllocateInfo {
	uint32_t sType;
	const void* pNext;
	uint64_t descriptorPool;
	uint32_t descriptorSetCount;
	const uint64_t* pSetLayouts;
} gsDescriptorSetAllocateInfo;

typedef struct gsDescriptorBufferInfo {
	uint64_t buffer;
	uint64_t offset;
	uint64_t range;
} gsDescriptorBufferInfo;

typedef struct gsWriteDescriptorSet {
	uint32_t sType;
	const void* pNext;
	uint64_t dstSet;
	uint32_t dstBinding;
	uint32_t dstArrayElement;
	uint32_t descriptorCount;
	uint32_t descriptorType;
	const void* pImageInfo;
	const gsDescriptorBufferInfo* pBufferInfo;
	const void* pTexelBufferView;
} gsWriteDescriptorSet;

typedef struct gsExtensionProperties {
	char extensionName[256];
	uint32_t specVersion;
} gsExtensionProperties;

typedef struct gsLayerProperties {
	char layerName[256];
	uint32_t specVersion;
	uint32_t implementationVersion;
	char description[256];
} gsLayerProperties;

typedef struct gsQueueFamilyProperties {
	uint32_t queueFlags;
	uint32_t queueCount;
	uint32_t timestampValidBits;
	uint32_t minImageTransferGranularity[3];
} gsQueueFamilyProperties;

// gsDeviceFns holds the device-level entry points these helpers call,
// resolved once per device through vkGetDeviceProcAddr.
typedef struct gsDeviceFns {
	void* cmdPipelineBarrier;
	void* cmdCopyBuffer;
	void* queueSubmit;
	void* createDescriptorSetLayout;
	void* createPipelineLayout;
	void* createDescriptorPool;
	void* allocateDescriptorSets;
	void* updateDescriptorSets;
} gsDeviceFns;

int gs_load_device_fns(void* instance, void* device, gsDeviceFns* f);

void gs_cmd_memory_barrier(const gsDeviceFns* f, void* cmd, uint32_t srcStage, uint32_t dstStage,
	uint32_t srcAccess, uint32_t dstAccess);
// gs_cmd_copy_buffer records one vkCmdCopyBuffer of count regions.
void gs_cmd_copy_buffer(const gsDeviceFns* f, void* cmd, uint64_t src, uint64_t dst,
	uint32_t count, const gsBufferCopy* regions);
int32_t gs_queue_submit(const gsDeviceFns* f, void* queue, void* cmd, uint64_t fence);

// gs_create_instance creates an instance named "gpuscatter" for apiVersion.
int32_t gs_create_instance(const void* pNext, uint32_t flags, uint32_t apiVersion, uint32_t layerCount,
	const char* const* layers, uint32_t extensionCount, const char* const* extensions, void** instance);

int32_t gs_create_device(void* instance, void* physicalDevice, uint32_t queueFamily, const void* pNext,
	uint32_t extensionCount, const char* const* extensions, const gsPhysicalDeviceFeatures* features, void** device);

int32_t gs_create_set_layout(const gsDeviceFns* f, void* device, uint32_t storageBuffers, uint64_t* layout);
int32_t gs_create_pipeline_layout(const gsDeviceFns* f, void* device, uint64_t setLayout, uint32_t pushSize,
	uint64_t* layout);
int32_t gs_create_descriptor_pool(const gsDeviceFns* f, void* device, uint32_t maxSets, uint32_t descriptors,
	uint64_t* pool);
int32_t gs_allocate_descriptor_set(const gsDeviceFns* f, void* device, uint64_t pool, uint64_t setLayout,
	uint64_t* set);
// gs_write_storage_buffers points bindings 0 ... n-1 of set at the n
// buffer ranges infos; it fails only when out of host memory.
int32_t gs_write_storage_buffers(const gsDeviceFns* f, void* device, uint64_t set, uint32_t n,
	const gsDescriptorBufferInfo* infos);

// The enumerations: each fills at most *count entries of out (NULL: only
// counts) and returns the VkResult (GS_INCOMPLETE when out was short).
int32_t gs_instance_layers(uint32_t* count, gsLayerProperties* out);
int32_t gs_instance_extensions(const char* layer, uint32_t* count, gsExtensionProperties* out);
int32_t gs_device_extensions(void* instance, void* physicalDevice, uint32_t* count, gsExtensionProperties* out);
int32_t gs_queue_families(void* instance, void* physicalDevice, uint32_t* count, gsQueueFamilyProperties* out);

#endif
