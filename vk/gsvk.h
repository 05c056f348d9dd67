// Minimal C declarations for the Vulkan structures and entry points that the
// vulkan-go binding (generated from 1.1.88 headers) does not provide. Only the
// members read or written by this package are named; everything else keeps
// its size and alignment so the layouts match the Khronos headers. The layout
// is checked against the system headers by layout_test.go.

#ifndef GPUSCATTER_GSVK_H
#define GPUSCATTER_GSVK_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define GSVK_CALL __stdcall
#else
#define GSVK_CALL
#endif

typedef uint32_t gsBool32;
typedef uint64_t gsDeviceSize;

// VkStructureType values.
#define GS_ST_PHYSICAL_DEVICE_FEATURES_2 1000059000u
#define GS_ST_PHYSICAL_DEVICE_PROPERTIES_2 1000059001u
#define GS_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES 1000083000u
#define GS_ST_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES 1000082000u
#define GS_ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES 1000094000u
#define GS_ST_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT 1000128003u
#define GS_ST_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT 1000128004u
#define GS_ST_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES 1000168000u
#define GS_ST_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES 1000177000u
#define GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES 1000180000u
#define GS_ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES 1000196000u
#define GS_ST_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES 1000197000u
#define GS_ST_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES 1000257000u
#define GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT 1000260000u
#define GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT 1000273000u
#define GS_ST_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2 1000059006u
#define GS_ST_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT 1000237000u
#define GS_ST_VALIDATION_FEATURES_EXT 1000247000u
#define GS_MAX_MEMORY_HEAPS 16

// VkDebugUtilsMessageSeverityFlagBitsEXT and VkDebugUtilsMessageTypeFlagBitsEXT.
#define GS_DEBUG_SEVERITY_VERBOSE 0x00000001u
#define GS_DEBUG_SEVERITY_INFO 0x00000010u
#define GS_DEBUG_SEVERITY_WARNING 0x00000100u
#define GS_DEBUG_SEVERITY_ERROR 0x00001000u
#define GS_DEBUG_TYPE_GENERAL 0x00000001u
#define GS_DEBUG_TYPE_VALIDATION 0x00000002u
#define GS_DEBUG_TYPE_PERFORMANCE 0x00000004u

// VkValidationFeatureEnableEXT.
#define GS_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT 0u
#define GS_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT_EXT 1u
#define GS_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT 4u

// VkPhysicalDeviceFeatures2: the core feature block is read through vulkan-go.
typedef struct gsPhysicalDeviceFeatures2 {
	uint32_t sType;
	void* pNext;
	gsBool32 features[55];
} gsPhysicalDeviceFeatures2;

// VkPhysicalDeviceProperties2: the core property block is read through
// vulkan-go; here it is only storage of the right size and alignment.
typedef struct gsPhysicalDeviceProperties2 {
	uint32_t sType;
	void* pNext;
	uint64_t properties[103];
} gsPhysicalDeviceProperties2;

typedef struct gsPhysicalDeviceShaderAtomicFloatFeaturesEXT {
	uint32_t sType;
	void* pNext;
	gsBool32 shaderBufferFloat32Atomics;
	gsBool32 shaderBufferFloat32AtomicAdd;
	gsBool32 shaderBufferFloat64Atomics;
	gsBool32 shaderBufferFloat64AtomicAdd;
	gsBool32 shaderSharedFloat32Atomics;
	gsBool32 shaderSharedFloat32AtomicAdd;
	gsBool32 shaderSharedFloat64Atomics;
	gsBool32 shaderSharedFloat64AtomicAdd;
	gsBool32 shaderImageFloat32Atomics;
	gsBool32 shaderImageFloat32AtomicAdd;
	gsBool32 sparseImageFloat32Atomics;
	gsBool32 sparseImageFloat32AtomicAdd;
} gsPhysicalDeviceShaderAtomicFloatFeaturesEXT;

typedef struct gsPhysicalDeviceShaderAtomicFloat2FeaturesEXT {
	uint32_t sType;
	void* pNext;
	gsBool32 shaderBufferFloat16Atomics;
	gsBool32 shaderBufferFloat16AtomicAdd;
	gsBool32 shaderBufferFloat16AtomicMinMax;
	gsBool32 shaderBufferFloat32AtomicMinMax;
	gsBool32 shaderBufferFloat64AtomicMinMax;
	gsBool32 shaderSharedFloat16Atomics;
	gsBool32 shaderSharedFloat16AtomicAdd;
	gsBool32 shaderSharedFloat16AtomicMinMax;
	gsBool32 shaderSharedFloat32AtomicMinMax;
	gsBool32 shaderSharedFloat64AtomicMinMax;
	gsBool32 shaderImageFloat32AtomicMinMax;
	gsBool32 sparseImageFloat32AtomicMinMax;
} gsPhysicalDeviceShaderAtomicFloat2FeaturesEXT;

typedef struct gsPhysicalDeviceShaderAtomicInt64Features {
	uint32_t sType;
	void* pNext;
	gsBool32 shaderBufferInt64Atomics;
	gsBool32 shaderSharedInt64Atomics;
} gsPhysicalDeviceShaderAtomicInt64Features;

typedef struct gsPhysicalDevice8BitStorageFeatures {
	uint32_t sType;
	void* pNext;
	gsBool32 storageBuffer8BitAccess;
	gsBool32 uniformAndStorageBuffer8BitAccess;
	gsBool32 storagePushConstant8;
} gsPhysicalDevice8BitStorageFeatures;

typedef struct gsPhysicalDevice16BitStorageFeatures {
	uint32_t sType;
	void* pNext;
	gsBool32 storageBuffer16BitAccess;
	gsBool32 uniformAndStorageBuffer16BitAccess;
	gsBool32 storagePushConstant16;
	gsBool32 storageInputOutput16;
} gsPhysicalDevice16BitStorageFeatures;

typedef struct gsPhysicalDeviceShaderFloat16Int8Features {
	uint32_t sType;
	void* pNext;
	gsBool32 shaderFloat16;
	gsBool32 shaderInt8;
} gsPhysicalDeviceShaderFloat16Int8Features;

typedef struct gsPhysicalDeviceBufferDeviceAddressFeatures {
	uint32_t sType;
	void* pNext;
	gsBool32 bufferDeviceAddress;
	gsBool32 bufferDeviceAddressCaptureReplay;
	gsBool32 bufferDeviceAddressMultiDevice;
} gsPhysicalDeviceBufferDeviceAddressFeatures;

typedef struct gsPhysicalDeviceSubgroupProperties {
	uint32_t sType;
	void* pNext;
	uint32_t subgroupSize;
	uint32_t supportedStages;
	uint32_t supportedOperations;
	gsBool32 quadOperationsInAllStages;
} gsPhysicalDeviceSubgroupProperties;

typedef struct gsConformanceVersion {
	uint8_t major;
	uint8_t minor;
	uint8_t subminor;
	uint8_t patch;
} gsConformanceVersion;

typedef struct gsPhysicalDeviceDriverProperties {
	uint32_t sType;
	void* pNext;
	uint32_t driverID;
	char driverName[256];
	char driverInfo[256];
	gsConformanceVersion conformanceVersion;
} gsPhysicalDeviceDriverProperties;

typedef struct gsPhysicalDeviceMaintenance3Properties {
	uint32_t sType;
	void* pNext;
	uint32_t maxPerSetDescriptors;
	gsDeviceSize maxMemoryAllocationSize;
} gsPhysicalDeviceMaintenance3Properties;

// VkPhysicalDeviceFloatControlsProperties (Vulkan 1.2,
// VK_KHR_shader_float_controls).
typedef struct gsPhysicalDeviceFloatControlsProperties {
	uint32_t sType;
	void* pNext;
	uint32_t denormBehaviorIndependence;
	uint32_t roundingModeIndependence;
	gsBool32 shaderSignedZeroInfNanPreserveFloat16;
	gsBool32 shaderSignedZeroInfNanPreserveFloat32;
	gsBool32 shaderSignedZeroInfNanPreserveFloat64;
	gsBool32 shaderDenormPreserveFloat16;
	gsBool32 shaderDenormPreserveFloat32;
	gsBool32 shaderDenormPreserveFloat64;
	gsBool32 shaderDenormFlushToZeroFloat16;
	gsBool32 shaderDenormFlushToZeroFloat32;
	gsBool32 shaderDenormFlushToZeroFloat64;
	gsBool32 shaderRoundingModeRTEFloat16;
	gsBool32 shaderRoundingModeRTEFloat32;
	gsBool32 shaderRoundingModeRTEFloat64;
	gsBool32 shaderRoundingModeRTZFloat16;
	gsBool32 shaderRoundingModeRTZFloat32;
	gsBool32 shaderRoundingModeRTZFloat64;
} gsPhysicalDeviceFloatControlsProperties;

// VkShaderFloatControlsIndependence.
#define GS_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY 0u
#define GS_FLOAT_CONTROLS_INDEPENDENCE_ALL 1u
#define GS_FLOAT_CONTROLS_INDEPENDENCE_NONE 2u

// VkPhysicalDeviceMemoryProperties2: the memory properties (520 bytes)
// are read through vulkan-go; here they are only storage.
typedef struct gsPhysicalDeviceMemoryProperties2 {
	uint32_t sType;
	void* pNext;
	uint64_t memoryProperties[65];
} gsPhysicalDeviceMemoryProperties2;

typedef struct gsPhysicalDeviceMemoryBudgetPropertiesEXT {
	uint32_t sType;
	void* pNext;
	gsDeviceSize heapBudget[GS_MAX_MEMORY_HEAPS];
	gsDeviceSize heapUsage[GS_MAX_MEMORY_HEAPS];
} gsPhysicalDeviceMemoryBudgetPropertiesEXT;

// Prefix of VkDebugUtilsMessengerCallbackDataEXT up to pMessage; the
// structure is only ever read through a pointer.
typedef struct gsDebugUtilsMessengerCallbackDataEXT {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	const char* pMessageIdName;
	int32_t messageIdNumber;
	const char* pMessage;
} gsDebugUtilsMessengerCallbackDataEXT;

typedef gsBool32(GSVK_CALL* gsDebugCallback)(uint32_t severity, uint32_t types,
	const gsDebugUtilsMessengerCallbackDataEXT* data, void* user);

typedef struct gsDebugUtilsMessengerCreateInfoEXT {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t messageSeverity;
	uint32_t messageType;
	gsDebugCallback pfnUserCallback;
	void* pUserData;
} gsDebugUtilsMessengerCreateInfoEXT;

// VkValidationFeaturesEXT (VK_EXT_validation_features), chained onto
// VkInstanceCreateInfo to turn on validation the layer leaves off by default.
typedef struct gsValidationFeaturesEXT {
	uint32_t sType;
	const void* pNext;
	uint32_t enabledValidationFeatureCount;
	const uint32_t* pEnabledValidationFeatures;
	uint32_t disabledValidationFeatureCount;
	const uint32_t* pDisabledValidationFeatures;
} gsValidationFeaturesEXT;

// Bits selecting which structures gs_link_features and gs_link_properties
// put on a pNext chain.
#define GS_FEAT_ATOMIC_FLOAT 0x01u
#define GS_FEAT_ATOMIC_FLOAT2 0x02u
#define GS_FEAT_ATOMIC_INT64 0x04u
#define GS_FEAT_STORAGE8 0x08u
#define GS_FEAT_STORAGE16 0x10u
#define GS_FEAT_FLOAT16_INT8 0x20u
#define GS_FEAT_BDA 0x40u

#define GS_PROP_SUBGROUP 0x01u
#define GS_PROP_DRIVER 0x02u
#define GS_PROP_MAINT3 0x04u
#define GS_PROP_FLOAT_CONTROLS 0x08u

// gsChain holds every structure this package chains onto
// vkGetPhysicalDeviceFeatures2, vkGetPhysicalDeviceProperties2 and
// vkCreateDevice. It is allocated in C memory.
typedef struct gsChain {
	gsPhysicalDeviceFeatures2 features2;
	gsPhysicalDeviceProperties2 properties2;
	gsPhysicalDeviceShaderAtomicFloatFeaturesEXT atomicFloat;
	gsPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomicFloat2;
	gsPhysicalDeviceShaderAtomicInt64Features atomicInt64;
	gsPhysicalDevice8BitStorageFeatures storage8;
	gsPhysicalDevice16BitStorageFeatures storage16;
	gsPhysicalDeviceShaderFloat16Int8Features float16Int8;
	gsPhysicalDeviceBufferDeviceAddressFeatures bda;
	gsPhysicalDeviceSubgroupProperties subgroup;
	gsPhysicalDeviceDriverProperties driver;
	gsPhysicalDeviceMaintenance3Properties maint3;
	gsPhysicalDeviceFloatControlsProperties floatControls;
} gsChain;

void gs_set_gipa(void* fn);
int gs_have_gipa(void);
void* gs_proc(void* instance, const char* name);
uint32_t gs_instance_version(void);
void* gs_link_features(gsChain* c, uint32_t mask);
void gs_link_properties(gsChain* c, uint32_t mask);
int gs_get_features2(void* instance, void* physicalDevice, gsChain* c);
int gs_get_properties2(void* instance, void* physicalDevice, gsChain* c);
int gs_memory_budget(void* instance, void* physicalDevice, gsPhysicalDeviceMemoryBudgetPropertiesEXT* out);
void gs_fill_validation_features(gsValidationFeaturesEXT* features, const void* next, int gpuAssisted);
void gs_fill_messenger_info(gsDebugUtilsMessengerCreateInfoEXT* info, uintptr_t user);
int32_t gs_create_messenger(void* instance, const gsDebugUtilsMessengerCreateInfoEXT* info, uint64_t* out);
void gs_destroy_messenger(void* instance, uint64_t messenger);

#endif
