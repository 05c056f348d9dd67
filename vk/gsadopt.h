// Declarations for adopting a device another program created: reading the
// features it enabled from its VkDeviceCreateInfo, the feature chain a
// program chains onto its own vkCreateDevice, and queue submissions with
// timeline semaphores (Vulkan 1.2), which the 1.1.88 headers of vulkan-go
// lack. Only the members read or written are named; the layouts match the
// Khronos headers (testdata/adopt_layout_check.c).

#ifndef GPUSCATTER_GSADOPT_H
#define GPUSCATTER_GSADOPT_H

#include <stdint.h>

#include "gsvk.h"

#define GS_ST_SUBMIT_INFO 4u
#define GS_ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES 49u
#define GS_ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES 51u
#define GS_ST_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES 1000207000u
#define GS_ST_SEMAPHORE_TYPE_CREATE_INFO 1000207002u
#define GS_ST_TIMELINE_SEMAPHORE_SUBMIT_INFO 1000207003u

// Indices of gsEnabled.f: the features a device was created with that this
// package reads.
enum {
	GS_EN_SHADER_INT64,
	GS_EN_SHADER_FLOAT64,
	GS_EN_SHADER_INT16,
	GS_EN_SHADER_FLOAT16,
	GS_EN_SHADER_INT8,
	GS_EN_STORAGE8,
	GS_EN_STORAGE16,
	GS_EN_BDA,
	GS_EN_TIMELINE,
	GS_EN_BUF_F32_ATOMICS,
	GS_EN_BUF_F32_ADD,
	GS_EN_BUF_F32_MINMAX,
	GS_EN_SHARED_F32_ADD,
	GS_EN_BUF_F16_ATOMICS,
	GS_EN_BUF_F16_ADD,
	GS_EN_BUF_F16_MINMAX,
	GS_EN_BUF_F64_ATOMICS,
	GS_EN_BUF_F64_ADD,
	GS_EN_BUF_F64_MINMAX,
	GS_EN_BUF_I64_ATOMICS,
	GS_EN_SHARED_I64_ATOMICS,
	GS_EN_COUNT
};

// Positions of the VkBool32 members read from VkPhysicalDeviceVulkan11Features
// and VkPhysicalDeviceVulkan12Features, counted from their first member.
#define GS_V11_STORAGE16 0
#define GS_V12_STORAGE8 2
#define GS_V12_BUF_I64_ATOMICS 5
#define GS_V12_SHARED_I64_ATOMICS 6
#define GS_V12_FLOAT16 7
#define GS_V12_INT8 8
#define GS_V12_TIMELINE 37
#define GS_V12_BDA 38

// A feature structure read as its VkBool32 members in order.
typedef struct gsBools {
	uint32_t sType;
	const void* pNext;
	gsBool32 b[64];
} gsBools;

// VkTimelineSemaphoreSubmitInfo, chained onto gscall.h's gsSubmitInfo by
// gs_queue_submit_timeline.
typedef struct gsTimelineSemaphoreSubmitInfo {
	uint32_t sType;
	const void* pNext;
	uint32_t waitSemaphoreValueCount;
	const uint64_t* pWaitSemaphoreValues;
	uint32_t signalSemaphoreValueCount;
	const uint64_t* pSignalSemaphoreValues;
} gsTimelineSemaphoreSubmitInfo;

typedef struct gsEnabled {
	gsBool32 f[GS_EN_COUNT];
} gsEnabled;

// VkPhysicalDeviceTimelineSemaphoreFeatures.
typedef struct gsPhysicalDeviceTimelineSemaphoreFeatures {
	uint32_t sType;
	void* pNext;
	gsBool32 timelineSemaphore;
} gsPhysicalDeviceTimelineSemaphoreFeatures;

// gsRequestChain is the feature chain handed to a program for its own
// vkCreateDevice: features2 (the core block included) first.
typedef struct gsRequestChain {
	gsChain c;
	gsPhysicalDeviceTimelineSemaphoreFeatures timeline;
} gsRequestChain;

// gs_read_create_info reads the features that createInfo (a
// VkDeviceCreateInfo) enables into out and returns its extension names.
void gs_read_create_info(const void* createInfo, gsEnabled* out, uint32_t* extensionCount, const char* const** extensions);

// gs_timeline_supported queries whether the physical device offers
// timelineSemaphore.
int gs_timeline_supported(void* instance, void* physicalDevice);

// gs_link_request links the request chain of mask (GS_FEAT_ bits) and,
// with timeline, the timeline-semaphore features, behind features2, and
// returns &c->c.features2.
void* gs_link_request(gsRequestChain* c, uint32_t mask, int timeline);

// gs_queue_submit_timeline submits cmd to queue, waiting for the timeline values
// of wait (at every stage) and signalling those of signal, and fence.
int32_t gs_queue_submit_timeline(void* instance, void* queue, void* cmd, uint64_t fence,
	uint32_t waitCount, const uint64_t* waitSemaphores, const uint64_t* waitValues,
	uint32_t signalCount, const uint64_t* signalSemaphores, const uint64_t* signalValues);

#endif
