// C side of the entry points that vulkan-go does not wrap. Every call goes
// through the vkGetInstanceProcAddr that the loader code handed to
// gs_set_gipa.

#include <stdlib.h>
#include <string.h>

#include "gsvk.h"
#include "_cgo_export.h"

typedef void* (GSVK_CALL* gsGetInstanceProcAddr)(void* instance, const char* name);
typedef int32_t (GSVK_CALL* gsEnumerateInstanceVersion)(uint32_t* version);
typedef void (GSVK_CALL* gsGetPhysicalDeviceFeatures2)(void* physicalDevice, gsPhysicalDeviceFeatures2* features);
typedef void (GSVK_CALL* gsGetPhysicalDeviceProperties2)(void* physicalDevice, gsPhysicalDeviceProperties2* properties);
typedef void (GSVK_CALL* gsGetPhysicalDeviceMemoryProperties2)(void* physicalDevice, gsPhysicalDeviceMemoryProperties2* properties);
typedef int32_t (GSVK_CALL* gsCreateDebugUtilsMessenger)(void* instance,
	const gsDebugUtilsMessengerCreateInfoEXT* info, const void* allocator, uint64_t* messenger);
typedef void (GSVK_CALL* gsDestroyDebugUtilsMessenger)(void* instance, uint64_t messenger, const void* allocator);

static gsGetInstanceProcAddr gipa = NULL;

void gs_set_gipa(void* fn) {
	gipa = (gsGetInstanceProcAddr)fn;
}

int gs_have_gipa(void) {
	return gipa != NULL;
}

void* gs_proc(void* instance, const char* name) {
	if (gipa == NULL) {
		return NULL;
	}
	return gipa(instance, name);
}

uint32_t gs_instance_version(void) {
	gsEnumerateInstanceVersion fn = (gsEnumerateInstanceVersion)gs_proc(NULL, "vkEnumerateInstanceVersion");
	uint32_t version = 1u << 22; // VK_API_VERSION_1_0
	if (fn == NULL || fn(&version) != 0) {
		return 1u << 22;
	}
	return version;
}

void* gs_link_features(gsChain* c, uint32_t mask) {
	void* head = NULL;
#define GS_LINK(bit, field, stype)        \
	if (mask & (bit)) {                   \
		c->field.sType = (stype);         \
		c->field.pNext = head;            \
		head = &c->field;                 \
	}
	GS_LINK(GS_FEAT_ATOMIC_FLOAT, atomicFloat, GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT)
	GS_LINK(GS_FEAT_ATOMIC_FLOAT2, atomicFloat2, GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT)
	GS_LINK(GS_FEAT_ATOMIC_INT64, atomicInt64, GS_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES)
	GS_LINK(GS_FEAT_STORAGE8, storage8, GS_ST_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES)
	GS_LINK(GS_FEAT_STORAGE16, storage16, GS_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES)
	GS_LINK(GS_FEAT_FLOAT16_INT8, float16Int8, GS_ST_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES)
	GS_LINK(GS_FEAT_BDA, bda, GS_ST_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES)
	c->features2.sType = GS_ST_PHYSICAL_DEVICE_FEATURES_2;
	c->features2.pNext = head;
	return head;
}

void gs_link_properties(gsChain* c, uint32_t mask) {
	void* head = NULL;
	GS_LINK(GS_PROP_SUBGROUP, subgroup, GS_ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES)
	GS_LINK(GS_PROP_DRIVER, driver, GS_ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES)
	GS_LINK(GS_PROP_MAINT3, maint3, GS_ST_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES)
	GS_LINK(GS_PROP_FLOAT_CONTROLS, floatControls, GS_ST_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES)
#undef GS_LINK
	c->properties2.sType = GS_ST_PHYSICAL_DEVICE_PROPERTIES_2;
	c->properties2.pNext = head;
}

int gs_get_features2(void* instance, void* physicalDevice, gsChain* c) {
	gsGetPhysicalDeviceFeatures2 fn = (gsGetPhysicalDeviceFeatures2)gs_proc(instance, "vkGetPhysicalDeviceFeatures2");
	if (fn == NULL) {
		fn = (gsGetPhysicalDeviceFeatures2)gs_proc(instance, "vkGetPhysicalDeviceFeatures2KHR");
	}
	if (fn == NULL) {
		return 0;
	}
	fn(physicalDevice, &c->features2);
	return 1;
}

int gs_get_properties2(void* instance, void* physicalDevice, gsChain* c) {
	gsGetPhysicalDeviceProperties2 fn = (gsGetPhysicalDeviceProperties2)gs_proc(instance, "vkGetPhysicalDeviceProperties2");
	if (fn == NULL) {
		fn = (gsGetPhysicalDeviceProperties2)gs_proc(instance, "vkGetPhysicalDeviceProperties2KHR");
	}
	if (fn == NULL) {
		return 0;
	}
	fn(physicalDevice, &c->properties2);
	return 1;
}

// gs_memory_budget fills out with VK_EXT_memory_budget's heap budgets and
// usage; it returns 0 when vkGetPhysicalDeviceMemoryProperties2 is missing.
// The caller checks that the device has the extension.
int gs_memory_budget(void* instance, void* physicalDevice, gsPhysicalDeviceMemoryBudgetPropertiesEXT* out) {
	gsGetPhysicalDeviceMemoryProperties2 fn = (gsGetPhysicalDeviceMemoryProperties2)gs_proc(instance, "vkGetPhysicalDeviceMemoryProperties2");
	if (fn == NULL) {
		fn = (gsGetPhysicalDeviceMemoryProperties2)gs_proc(instance, "vkGetPhysicalDeviceMemoryProperties2KHR");
	}
	if (fn == NULL) {
		return 0;
	}
	gsPhysicalDeviceMemoryProperties2 props;
	memset(&props, 0, sizeof(props));
	memset(out, 0, sizeof(*out));
	out->sType = GS_ST_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
	props.sType = GS_ST_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
	props.pNext = out;
	fn(physicalDevice, &props);
	out->pNext = NULL;
	return 1;
}

static gsBool32 GSVK_CALL gs_debug_callback(uint32_t severity, uint32_t types,
	const gsDebugUtilsMessengerCallbackDataEXT* data, void* user) {
	const char* id = "";
	const char* msg = "";
	if (data != NULL) {
		if (data->pMessageIdName != NULL) {
			id = data->pMessageIdName;
		}
		if (data->pMessage != NULL) {
			msg = data->pMessage;
		}
	}
	gsvkDebugMessage(severity, types, (char*)id, (char*)msg, (uintptr_t)user);
	return 0; // VK_FALSE: never abort the call that triggered the message.
}

// The features gs_fill_validation_features enables; static, so the
// pointers to them stay valid for as long as the layer may read them.
static const uint32_t gs_sync_validation[] = {GS_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
static const uint32_t gs_gpu_assisted_validation[] = {
	GS_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,
	GS_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT,
	GS_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT_EXT,
};

// gs_fill_validation_features fills features to enable the validation
// layer's synchronization validation and, when gpuAssisted is non-zero,
// its GPU-assisted validation too (with a descriptor set slot reserved for
// the instrumentation), with next as the rest of the pNext chain.
void gs_fill_validation_features(gsValidationFeaturesEXT* features, const void* next, int gpuAssisted) {
	memset(features, 0, sizeof(*features));
	features->sType = GS_ST_VALIDATION_FEATURES_EXT;
	features->pNext = next;
	if (gpuAssisted) {
		features->enabledValidationFeatureCount = sizeof(gs_gpu_assisted_validation) / sizeof(gs_gpu_assisted_validation[0]);
		features->pEnabledValidationFeatures = gs_gpu_assisted_validation;
	} else {
		features->enabledValidationFeatureCount = 1;
		features->pEnabledValidationFeatures = gs_sync_validation;
	}
}

void gs_fill_messenger_info(gsDebugUtilsMessengerCreateInfoEXT* info, uintptr_t user) {
	memset(info, 0, sizeof(*info));
	info->sType = GS_ST_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
	info->messageSeverity = GS_DEBUG_SEVERITY_WARNING | GS_DEBUG_SEVERITY_ERROR;
	info->messageType = GS_DEBUG_TYPE_GENERAL | GS_DEBUG_TYPE_VALIDATION | GS_DEBUG_TYPE_PERFORMANCE;
	info->pfnUserCallback = gs_debug_callback;
	info->pUserData = (void*)user;
}

int32_t gs_create_messenger(void* instance, const gsDebugUtilsMessengerCreateInfoEXT* info, uint64_t* out) {
	gsCreateDebugUtilsMessenger fn = (gsCreateDebugUtilsMessenger)gs_proc(instance, "vkCreateDebugUtilsMessengerEXT");
	if (fn == NULL) {
		return -7; // VK_ERROR_EXTENSION_NOT_PRESENT
	}
	return fn(instance, info, NULL, out);
}

void gs_destroy_messenger(void* instance, uint64_t messenger) {
	gsDestroyDebugUtilsMessenger fn = (gsDestroyDebugUtilsMessenger)gs_proc(instance, "vkDestroyDebugUtilsMessengerEXT");
	if (fn != NULL && messenger != 0) {
		fn(instance, messenger, NULL);
	}
}
