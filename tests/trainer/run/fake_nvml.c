/* A stand-in for libnvidia-ml.so.1 with fixed, known readings: the only fake in the trainer's
 * tests, and it stands exactly at one class's boundary (NvmlLibrary's dlopen of NVML), so that
 * GPU telemetry is tested end to end on machines without a GPU. It is built against the trainer's
 * own ABI declarations (trainer/src/run/nvmlabi.h); the checks at the bottom fail to compile if an
 * export's signature differs from what the trainer calls.
 *
 * Two GPUs. GPU 0: 250 W, 87 % utilisation, 40 GiB of 80 GiB used. GPU 1: 300 W, 50 %, 20 GiB.
 * UUIDs "GPU-fake-0" and "GPU-fake-1". FAKE_NVML_NO_POWER=1 makes the power query fail with
 * NVML_ERROR_NOT_SUPPORTED (3), FAKE_NVML_INIT_FAIL=1 the initialisation with
 * NVML_ERROR_DRIVER_NOT_LOADED (9). */
#include "run/nvmlabi.h"

#include <stdlib.h>
#include <string.h>

struct nvmlDevice_st {
    unsigned index;
};

static struct nvmlDevice_st devices[2] = {{0}, {1}};
static int initialised = 0; /* a count, as NVML's: every nvmlInit_v2 needs its nvmlShutdown */

static int envSet(const char* name)
{
    const char* v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

nvmlReturn_t nvmlInit_v2(void)
{
    if (envSet("FAKE_NVML_INIT_FAIL")) return 9;
    ++initialised;
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (initialised == 0) return 1;
    --initialised;
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count)
{
    if (!initialised) return 1; /* NVML_ERROR_UNINITIALIZED */
    *count = 2;
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device)
{
    if (!initialised) return 1;
    if (index >= 2) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *device = &devices[index];
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device)
{
    if (!initialised) return 1;
    if (strcmp(uuid, "GPU-fake-0") == 0)
        *device = &devices[0];
    else if (strcmp(uuid, "GPU-fake-1") == 0)
        *device = &devices[1];
    else
        return 6; /* NVML_ERROR_NOT_FOUND */
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index)
{
    *index = device->index;
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts)
{
    if (envSet("FAKE_NVML_NO_POWER")) return 3; /* NVML_ERROR_NOT_SUPPORTED */
    *milliwatts = device->index == 0 ? 250000u : 300000u;
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization)
{
    utilization->gpu = device->index == 0 ? 87u : 50u;
    utilization->memory = 30u;
    return SCALEDESK_NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory)
{
    const unsigned long long gib = 1024ull * 1024ull * 1024ull;
    memory->total = 80ull * gib;
    memory->used = (device->index == 0 ? 40ull : 20ull) * gib;
    memory->free = memory->total - memory->used;
    return SCALEDESK_NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 6: return "Not Found";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

/* Signature checks against the trainer's declarations (an incompatible pointer is an error here). */
static nvmlInit_v2_fn checkInit = nvmlInit_v2;
static nvmlShutdown_fn checkShutdown = nvmlShutdown;
static nvmlDeviceGetCount_v2_fn checkCount = nvmlDeviceGetCount_v2;
static nvmlDeviceGetHandleByIndex_v2_fn checkByIndex = nvmlDeviceGetHandleByIndex_v2;
static nvmlDeviceGetHandleByUUID_fn checkByUuid = nvmlDeviceGetHandleByUUID;
static nvmlDeviceGetIndex_fn checkIndex = nvmlDeviceGetIndex;
static nvmlDeviceGetPowerUsage_fn checkPower = nvmlDeviceGetPowerUsage;
static nvmlDeviceGetUtilizationRates_fn checkUtil = nvmlDeviceGetUtilizationRates;
static nvmlDeviceGetMemoryInfo_fn checkMemory = nvmlDeviceGetMemoryInfo;
static nvmlErrorString_fn checkError = nvmlErrorString;
void* fakeNvmlSignatureChecks[] = {(void*)&checkInit,  (void*)&checkShutdown, (void*)&checkCount, (void*)&checkByIndex, (void*)&checkByUuid,
                                   (void*)&checkIndex, (void*)&checkPower,    (void*)&checkUtil,  (void*)&checkMemory,  (void*)&checkError};
