#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// The Vulkan structures are those vk declares (its gs*.h headers, whose
// layouts vk checks against the Khronos headers); only the ones vk has no
// use for are declared here.
#include "gsaddr.h"
#include "gsadopt.h"
#include "gscall.h"
#include "gsvk.h"

#include "callerdev.h"

typedef void* (*cdGIPA)(void* instance, const char* name);
typedef void* (*cdGDPA)(void* device, const char* name);
static cdGIPA gipa = NULL;

void* cd_load(void) {
	if (gipa == NULL) {
		void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
		if (lib == NULL) {
			return NULL;
		}
		gipa = (cdGIPA)dlsym(lib, "vkGetInstanceProcAddr");
	}
	return (void*)gipa;
}

static void* dev_proc(void* instance, void* device, const char* name) {
	cdGDPA gdpa = (cdGDPA)gipa(instance, "vkGetDeviceProcAddr");
	return gdpa == NULL ? NULL : gdpa(device, name);
}

extern void callerdevMessage(uintptr_t user, uint32_t severity, char* id, char* message);

static gsBool32 GSVK_CALL cd_callback(uint32_t severity, uint32_t types, const gsDebugUtilsMessengerCallbackDataEXT* data, void* user) {
	(void)types;
	callerdevMessage((uintptr_t)user, severity, (char*)(data->pMessageIdName ? data->pMessageIdName : ""),
		(char*)(data->pMessage ? data->pMessage : ""));
	return 0;
}

static const uint32_t cd_sync = GS_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;

typedef struct {
	gsValidationFeaturesEXT features;
	gsDebugUtilsMessengerCreateInfoEXT messenger;
} cdValidationNext;

void* cd_validation_next(uintptr_t user) {
	cdValidationNext* n = (cdValidationNext*)calloc(1, sizeof(cdValidationNext));
	if (n == NULL) {
		return NULL;
	}
	n->messenger.sType = GS_ST_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
	n->messenger.messageSeverity = GS_DEBUG_SEVERITY_WARNING | GS_DEBUG_SEVERITY_ERROR;
	n->messenger.messageType = GS_DEBUG_TYPE_GENERAL | GS_DEBUG_TYPE_VALIDATION | GS_DEBUG_TYPE_PERFORMANCE;
	n->messenger.pfnUserCallback = cd_callback;
	n->messenger.pUserData = (void*)user;
	n->features.sType = GS_ST_VALIDATION_FEATURES_EXT;
	n->features.pNext = &n->messenger;
	n->features.enabledValidationFeatureCount = 1;
	n->features.pEnabledValidationFeatures = &cd_sync;
	return n;
}

void cd_free_validation_next(void* next) { free(next); }

typedef int32_t (*cdCreateMessenger)(void* instance, const gsDebugUtilsMessengerCreateInfoEXT* info, const void* alloc, uint64_t* out);
typedef void (*cdDestroyMessenger)(void* instance, uint64_t messenger, const void* alloc);

int32_t cd_create_messenger(void* instance, void* next, uint64_t* out) {
	cdCreateMessenger fn = (cdCreateMessenger)gipa(instance, "vkCreateDebugUtilsMessengerEXT");
	if (fn == NULL) {
		return -7; // VK_ERROR_EXTENSION_NOT_PRESENT
	}
	return fn(instance, &((cdValidationNext*)next)->messenger, NULL, out);
}

void cd_destroy_messenger(void* instance, uint64_t messenger) {
	cdDestroyMessenger fn = (cdDestroyMessenger)gipa(instance, "vkDestroyDebugUtilsMessengerEXT");
	if (fn != NULL) {
		fn(instance, messenger, NULL);
	}
}

static const gsMemoryAllocateFlagsInfo cd_alloc_flags = {GS_ST_MEMORY_ALLOCATE_FLAGS_INFO, NULL, GS_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, 0u};

void* cd_device_address_alloc(void) { return (void*)&cd_alloc_flags; }

typedef uint64_t (*cdBufferAddress)(void* device, const gsBufferDeviceAddressInfo* info);

uint64_t cd_buffer_address(void* instance, void* device, uint64_t buffer) {
	cdBufferAddress fn = (cdBufferAddress)dev_proc(instance, device, "vkGetBufferDeviceAddress");
	if (fn == NULL) {
		return 0;
	}
	gsBufferDeviceAddressInfo info = {GS_ST_BUFFER_DEVICE_ADDRESS_INFO, NULL, buffer};
	return fn(device, &info);
}

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t semaphoreType;
	uint64_t initialValue;
} cdSemaphoreType;

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
} cdSemaphoreInfo;

typedef int32_t (*cdCreateSemaphore)(void* device, const cdSemaphoreInfo* info, const void* alloc, uint64_t* out);
typedef void (*cdDestroySemaphore)(void* device, uint64_t sem, const void* alloc);

int32_t cd_create_timeline(void* instance, void* device, uint64_t initial, uint64_t* out) {
	cdCreateSemaphore fn = (cdCreateSemaphore)dev_proc(instance, device, "vkCreateSemaphore");
	cdSemaphoreType t = {GS_ST_SEMAPHORE_TYPE_CREATE_INFO, NULL, 1u, initial};
	cdSemaphoreInfo ci = {9u /* VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO */, &t, 0};
	return fn(device, &ci, NULL, out);
}

void cd_destroy_semaphore(void* instance, void* device, uint64_t sem) {
	cdDestroySemaphore fn = (cdDestroySemaphore)dev_proc(instance, device, "vkDestroySemaphore");
	fn(device, sem, NULL);
}

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint64_t semaphore;
	uint64_t value;
} cdSignalInfo;

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t semaphoreCount;
	const uint64_t* pSemaphores;
	const uint64_t* pValues;
} cdWaitInfo;

typedef int32_t (*cdSignal)(void* device, const cdSignalInfo* info);
typedef int32_t (*cdWait)(void* device, const cdWaitInfo* info, uint64_t timeout);
typedef int32_t (*cdValue)(void* device, uint64_t sem, uint64_t* value);

int32_t cd_signal(void* instance, void* device, uint64_t sem, uint64_t value) {
	cdSignal fn = (cdSignal)dev_proc(instance, device, "vkSignalSemaphore");
	cdSignalInfo si = {1000207005u, NULL, sem, value};
	return fn(device, &si);
}

int32_t cd_wait(void* instance, void* device, uint64_t sem, uint64_t value, uint64_t timeout) {
	cdWait fn = (cdWait)dev_proc(instance, device, "vkWaitSemaphores");
	cdWaitInfo wi = {1000207004u, NULL, 0, 1, &sem, &value};
	return fn(device, &wi, timeout);
}

int32_t cd_value(void* instance, void* device, uint64_t sem, uint64_t* value) {
	cdValue fn = (cdValue)dev_proc(instance, device, "vkGetSemaphoreCounterValue");
	return fn(device, sem, value);
}

typedef int32_t (*cdQueueSubmit)(void* queue, uint32_t n, const gsSubmitInfo* s, uint64_t fence);

int32_t cd_submit_timeline(void* instance, void* queue, void* cmd, uint64_t wait, uint64_t waitValue,
	uint64_t signal, uint64_t signalValue, uint64_t fence) {
	cdQueueSubmit fn = (cdQueueSubmit)gipa(instance, "vkQueueSubmit");
	uint32_t stage = 0x00010000u; // all commands
	gsTimelineSemaphoreSubmitInfo t = {GS_ST_TIMELINE_SEMAPHORE_SUBMIT_INFO, NULL, wait ? 1u : 0u, &waitValue, signal ? 1u : 0u, &signalValue};
	gsSubmitInfo si = {GS_ST_SUBMIT_INFO, &t, wait ? 1u : 0u, &wait, &stage, cmd ? 1u : 0u, &cmd, signal ? 1u : 0u, &signal};
	return fn(queue, 1, &si, fence);
}

typedef struct {
	gsDeviceCreateInfo info;
	gsDeviceQueueCreateInfo queue;
	float priority;
	char** names;
	uint32_t count;
} cdCreate;

typedef int32_t (*cdCreateDevice)(void* pd, const gsDeviceCreateInfo* info, const void* alloc, void** out);

void* cd_create_device(void* instance, void* pd, uint32_t family, const void* pNext, uint32_t n, const char* const* exts, void** device, int32_t* result) {
	cdCreate* c = (cdCreate*)calloc(1, sizeof(cdCreate));
	if (c == NULL) {
		*result = -1;
		return NULL;
	}
	c->names = (char**)calloc(n + 1, sizeof(char*));
	c->count = n;
	for (uint32_t i = 0; i < n; i++) {
		c->names[i] = strdup(exts[i]);
	}
	c->priority = 1.0f;
	c->queue.sType = GS_ST_DEVICE_QUEUE_CREATE_INFO;
	c->queue.queueFamilyIndex = family;
	c->queue.queueCount = 1;
	c->queue.pQueuePriorities = &c->priority;
	c->info.sType = GS_ST_DEVICE_CREATE_INFO;
	c->info.pNext = pNext;
	c->info.queueCreateInfoCount = 1;
	c->info.pQueueCreateInfos = &c->queue;
	c->info.enabledExtensionCount = n;
	c->info.ppEnabledExtensionNames = (const char* const*)c->names;
	cdCreateDevice fn = (cdCreateDevice)gipa(instance, "vkCreateDevice");
	*result = fn(pd, &c->info, NULL, device);
	return c;
}

void cd_free_create_info(void* p) {
	cdCreate* c = (cdCreate*)p;
	if (c == NULL) {
		return;
	}
	for (uint32_t i = 0; i < c->count; i++) {
		free(c->names[i]);
	}
	free(c->names);
	free(c);
}

void* cd_create_info_of(void* p) { return p == NULL ? NULL : &((cdCreate*)p)->info; }
