// The few Vulkan 1.2 and extension entry points and structures that a
// program on vulkan-go's 1.1.88 headers reaches itself: the debug
// messenger with synchronization validation, device-address memory,
// timeline semaphores.

#ifndef CALLERDEV_H
#define CALLERDEV_H

#include <stdint.h>

void* cd_load(void);
// cd_validation_next returns the pNext chain for vkCreateInstance that
// enables synchronization validation and a messenger reporting to
// callerdevMessage(user, ...).
void* cd_validation_next(uintptr_t user);
void cd_free_validation_next(void* next);
int32_t cd_create_messenger(void* instance, void* next, uint64_t* out);
void cd_destroy_messenger(void* instance, uint64_t messenger);
void* cd_device_address_alloc(void);
uint64_t cd_buffer_address(void* instance, void* device, uint64_t buffer);
int32_t cd_create_timeline(void* instance, void* device, uint64_t initial, uint64_t* out);
void cd_destroy_semaphore(void* instance, void* device, uint64_t sem);
int32_t cd_signal(void* instance, void* device, uint64_t sem, uint64_t value);
int32_t cd_wait(void* instance, void* device, uint64_t sem, uint64_t value, uint64_t timeout);
int32_t cd_value(void* instance, void* device, uint64_t sem, uint64_t* value);
int32_t cd_submit_timeline(void* instance, void* queue, void* cmd, uint64_t wait, uint64_t waitValue,
	uint64_t signal, uint64_t signalValue, uint64_t fence);


void* cd_create_device(void* instance, void* pd, uint32_t family, const void* pNext, uint32_t n, const char* const* exts, void** device, int32_t* result);
void cd_free_create_info(void* p);

void* cd_create_info_of(void* p);
#endif
