#ifndef VKAPP_H
#define VKAPP_H

#include <stdint.h>
#include <vulkan/vulkan.h>

void* vkapp_dlopen(const char* name, char* err, int errlen);
void vkapp_set_gipa(void* gipa);
void* vkapp_validation_features(void);
VkResult vkapp_create_messenger(VkInstance instance, uint64_t* out);
void vkapp_destroy_messenger(VkInstance instance, uint64_t messenger);
void* vkapp_device_features(VkInstance instance, VkPhysicalDevice pd, int* bda, int* api12);
void* vkapp_allocate_flags(void);
VkResult vkapp_create_device(VkInstance instance, VkPhysicalDevice pd, uint32_t family, void* next,
	const char* const* extensions, uint32_t nextensions, VkDevice* out, void** info);
void vkapp_free_create_info(void* info);

#endif
