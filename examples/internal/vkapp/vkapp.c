#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "vkapp.h"
#include "_cgo_export.h"

static PFN_vkGetInstanceProcAddr gipa;

void* vkapp_dlopen(const char* name, char* err, int errlen) {
	void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char* e = dlerror();
		strncpy(err, e != NULL ? e : "dlopen failed", errlen - 1);
		err[errlen - 1] = 0;
		return NULL;
	}
	void* fn = dlsym(lib, "vkGetInstanceProcAddr");
	if (fn == NULL) {
		strncpy(err, "no vkGetInstanceProcAddr", errlen - 1);
		err[errlen - 1] = 0;
	}
	// The library stays open for the life of the process.
	return fn;
}

void vkapp_set_gipa(void* fn) { gipa = (PFN_vkGetInstanceProcAddr)fn; }

// vkapp_validation_features turns on the validation layer's
// synchronization validation (VK_EXT_validation_features), for the
// instance's pNext. It lives for the process.
void* vkapp_validation_features(void) {
	static VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
	VkValidationFeaturesEXT* f = calloc(1, sizeof *f);
	f->sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
	f->enabledValidationFeatureCount = 1;
	f->pEnabledValidationFeatures = enables;
	return f;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL messenger_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
	VkDebugUtilsMessageTypeFlagsEXT types, const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
	(void)types;
	(void)user;
	vkappMessage((int)severity, (char*)(data->pMessage != NULL ? data->pMessage : ""));
	return VK_FALSE;
}

// vkapp_create_messenger reports warnings and errors of every type to
// vkappMessage (Go).
VkResult vkapp_create_messenger(VkInstance instance, uint64_t* out) {
	PFN_vkCreateDebugUtilsMessengerEXT create =
		(PFN_vkCreateDebugUtilsMessengerEXT)gipa(instance, "vkCreateDebugUtilsMessengerEXT");
	if (create == NULL) {
		return VK_ERROR_EXTENSION_NOT_PRESENT;
	}
	VkDebugUtilsMessengerCreateInfoEXT ci = {0};
	ci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
	ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
	ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
		VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
	ci.pfnUserCallback = messenger_callback;
	VkDebugUtilsMessengerEXT m;
	VkResult r = create(instance, &ci, NULL, &m);
	*out = (uint64_t)m;
	return r;
}

void vkapp_destroy_messenger(VkInstance instance, uint64_t messenger) {
	PFN_vkDestroyDebugUtilsMessengerEXT destroy =
		(PFN_vkDestroyDebugUtilsMessengerEXT)gipa(instance, "vkDestroyDebugUtilsMessengerEXT");
	if (destroy != NULL) {
		destroy(instance, (VkDebugUtilsMessengerEXT)messenger, NULL);
	}
}

// vkapp_device_features queries the device's Vulkan 1.0, 1.1 and 1.2
// features into a VkPhysicalDeviceFeatures2 chain, for a
// VkDeviceCreateInfo's pNext that enables every feature the device has.
// *bda says whether bufferDeviceAddress is among them, *api12 whether the
// device offers Vulkan 1.2 at all (else the chain is not queried). The
// chain lives for the process.
void* vkapp_device_features(VkInstance instance, VkPhysicalDevice pd, int* bda, int* api12) {
	PFN_vkGetPhysicalDeviceProperties props_fn =
		(PFN_vkGetPhysicalDeviceProperties)gipa(instance, "vkGetPhysicalDeviceProperties");
	VkPhysicalDeviceProperties props;
	props_fn(pd, &props);
	*api12 = props.apiVersion >= VK_API_VERSION_1_2;
	*bda = 0;
	VkPhysicalDeviceFeatures2* f2 = calloc(1, sizeof *f2);
	VkPhysicalDeviceVulkan11Features* v11 = calloc(1, sizeof *v11);
	VkPhysicalDeviceVulkan12Features* v12 = calloc(1, sizeof *v12);
	f2->sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	f2->pNext = v11;
	v11->sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
	v11->pNext = v12;
	v12->sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
	if (!*api12) {
		return f2;
	}
	PFN_vkGetPhysicalDeviceFeatures2 get =
		(PFN_vkGetPhysicalDeviceFeatures2)gipa(instance, "vkGetPhysicalDeviceFeatures2");
	get(pd, f2);
	// Robust buffer access costs every access a bound check and hides
	// out-of-bounds bugs that the validation layer would otherwise see.
	f2->features.robustBufferAccess = VK_FALSE;
	// Capture and replay of addresses is for tools, and validation warns
	// about it.
	v12->bufferDeviceAddressCaptureReplay = VK_FALSE;
	v12->bufferDeviceAddressMultiDevice = VK_FALSE;
	*bda = v12->bufferDeviceAddress;
	return f2;
}

// vkapp_allocate_flags is the VkMemoryAllocateFlagsInfo that memory bound
// to a buffer with device-address usage must be allocated with.
void* vkapp_allocate_flags(void) {
	static VkMemoryAllocateFlagsInfo info = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
		.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	};
	return &info;
}

// vkapp_create_device creates a device with one queue of family and the
// given extensions, whose features are the chain next, and returns in
// *info the VkDeviceCreateInfo it was created with, which lives until
// vkapp_free_create_info (the program hands it to gpuscatter, which reads
// the enabled features and extensions from it). vulkan-go's
// vkCreateDevice is not used: it hands C a Go pointer to Go memory (the
// queue priorities), which cgo refuses.
VkResult vkapp_create_device(VkInstance instance, VkPhysicalDevice pd, uint32_t family, void* next,
	const char* const* extensions, uint32_t nextensions, VkDevice* out, void** info) {
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(instance, "vkCreateDevice");
	struct {
		VkDeviceCreateInfo ci;
		VkDeviceQueueCreateInfo q;
		float priority;
	}* all = calloc(1, sizeof *all);
	char** names = calloc(nextensions + 1, sizeof *names);
	for (uint32_t i = 0; i < nextensions; i++) {
		names[i] = strdup(extensions[i]);
	}
	all->priority = 1.0f;
	all->q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
	all->q.queueFamilyIndex = family;
	all->q.queueCount = 1;
	all->q.pQueuePriorities = &all->priority;
	all->ci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
	all->ci.pNext = next;
	all->ci.queueCreateInfoCount = 1;
	all->ci.pQueueCreateInfos = &all->q;
	all->ci.enabledExtensionCount = nextensions;
	all->ci.ppEnabledExtensionNames = (const char* const*)names;
	*info = &all->ci;
	return create(pd, &all->ci, NULL, out);
}

void vkapp_free_create_info(void* info) {
	VkDeviceCreateInfo* ci = info;
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++) {
		free((void*)ci->ppEnabledExtensionNames[i]);
	}
	free((void*)ci->ppEnabledExtensionNames);
	free(ci);
}
