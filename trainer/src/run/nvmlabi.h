/* The few NVML types and functions that GPU telemetry uses, declared here so that the trainer
 * builds with no CUDA or NVML headers and no link dependency: libnvidia-ml.so.1 is loaded at run
 * time (dlopen) where a driver provides it.
 *
 * Each declaration follows NVIDIA's documented, stable C ABI (NVML API Reference,
 * https://docs.nvidia.com/deploy/nvml-api/, and the driver's nvml.h):
 *   nvmlReturn_t     enum nvmlReturn_enum, int-sized; NVML_SUCCESS = 0
 *   nvmlDevice_t     opaque handle, struct nvmlDevice_st*
 *   nvmlUtilization_t { unsigned int gpu; unsigned int memory; }       percent over the last sample period
 *   nvmlMemory_t      { unsigned long long total, free, used; }        bytes (the v1 struct of nvmlDeviceGetMemoryInfo)
 *   nvmlInit_v2(void), nvmlShutdown(void)
 *   nvmlDeviceGetCount_v2(unsigned int* count)
 *   nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device)
 *   nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device)
 *   nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index)
 *   nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts)
 *   nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization)
 *   nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory)
 *   const char* nvmlErrorString(nvmlReturn_t result)
 *
 * Plain C, so that the test's stand-in library (tests/trainer/run/fake_nvml.c) is checked
 * against the same declarations. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t;
#define SCALEDESK_NVML_SUCCESS 0

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByUUID_fn)(const char*, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetIndex_fn)(nvmlDevice_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t, nvmlUtilization_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t, nvmlMemory_t*);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t);

#ifdef __cplusplus
}
#endif
