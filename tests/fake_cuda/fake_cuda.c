/*
 * A stand-in for the CUDA driver library libcuda.so.1, for gpu-doctor's smoke-test tests only:
 * never shipped or installed.
 *
 * It exports the driver-API entry points the smoke test calls (through cudarc) and answers them
 * from a scenario file: the path in FAKE_CUDA_SCENARIO, else "fake-cuda.scenario" in the
 * directory the library was loaded from, else one healthy GPU. "Device memory" is host memory,
 * and the smoke test's three kernels (saxpy, sgemm, count_mismatches) are computed on the CPU
 * when launched, so results can be verified for real. Scenario keys ("key = value" lines):
 *
 *   devices = 1            number of GPUs (0-8)
 *   init = 0               cuInit's return code (34 STUB_LIBRARY, 100 NO_DEVICE, 803 SYSTEM_DRIVER_MISMATCH)
 *   driver = 12040         cuDriverGetVersion's answer
 *   max_ptx_isa = 8.4      cuModuleLoadDataEx refuses PTX with a newer .version (222 UNSUPPORTED_PTX_VERSION)
 *   allocs = -1            cuMemAlloc succeeds this many times, then returns 2 OUT_OF_MEMORY
 *   total_mib = 81559      device memory reported by cuDeviceTotalMem / cuMemGetInfo
 *   free_mib = 80000
 *   name = ...             device name; cc = 9.0; sms = 132; clock_khz = 1980000
 *   mem_clock_khz = 2619000, bus_width = 5120   memory clock and bus width attributes
 *   wrong = saxpy          this kernel writes one wrong value (saxpy, sgemm)
 *   flip_after = 3         from this sgemm launch on, one output element is off (a failing GPU)
 *   crash = cuLaunchKernel this function crashes the process (SIGSEGV)
 *   hang = cuCtxSynchronize  this function blocks for hang_secs (default 600)
 *
 * Compiled with -DFAKE_OLD_DRIVER it lacks cuMemAllocHost_v2, like a library too old for the test.
 *
 * The same file builds the Windows nvcuda.dll with mingw (see fake_platform.h).
 */
#include "../fake_platform.h"
#include <signal.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUstream;
typedef struct fake_function *CUfunction;

enum {
    SUCCESS = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201, INVALID_IMAGE = 200, INVALID_PTX = 218, UNSUPPORTED_PTX_VERSION = 222,
    NOT_FOUND = 500,
};

#define MAX_DEVICES 8

struct fake_function { const char *name; };
static struct fake_function functions[] = { {"saxpy"}, {"sgemm"}, {"count_mismatches"} };
static int module_token;
static int context_token;

static struct {
    int loaded, initialised;
    int devices, init_code, driver, allocs, cc_major, cc_minor, sms, clock_khz, mem_clock_khz, bus_width;
    double max_isa;
    long total_mib, free_mib;
    unsigned long flip_after, sgemm_launches, hang_secs;
    char name[128], wrong[64], crash[64], hang[64];
} sc;

static void trim(char *s) {
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    char *b = s;
    while (*b == ' ' || *b == '\t') b++;
    memmove(s, b, strlen(b) + 1);
}

static void load_scenario(void) {
    if (sc.loaded) return;
    sc.loaded = 1;
    sc.devices = 1;
    sc.driver = 12040;
    sc.max_isa = 8.4;
    sc.allocs = -1;
    sc.total_mib = 81559;
    sc.free_mib = 80000;
    sc.cc_major = 9;
    sc.cc_minor = 0;
    sc.sms = 132;
    sc.clock_khz = 1980000;
    sc.mem_clock_khz = 2619000;
    sc.bus_width = 5120;
    sc.flip_after = (unsigned long)-1;
    sc.hang_secs = 600;
    strcpy(sc.name, "NVIDIA H100 80GB HBM3 (fake)");
    char path[PATH_MAX] = {0};
    const char *env = getenv("FAKE_CUDA_SCENARIO");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        fake_sibling_path((void *)load_scenario, "fake-cuda.scenario", path, sizeof path);
    }
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        char *k = line, *v = eq + 1;
        trim(k);
        trim(v);
        if (!strcmp(k, "devices")) { sc.devices = atoi(v); if (sc.devices > MAX_DEVICES) sc.devices = MAX_DEVICES; }
        else if (!strcmp(k, "init")) sc.init_code = atoi(v);
        else if (!strcmp(k, "driver")) sc.driver = atoi(v);
        else if (!strcmp(k, "max_ptx_isa")) sc.max_isa = atof(v);
        else if (!strcmp(k, "allocs")) sc.allocs = atoi(v);
        else if (!strcmp(k, "total_mib")) sc.total_mib = atol(v);
        else if (!strcmp(k, "free_mib")) sc.free_mib = atol(v);
        else if (!strcmp(k, "name")) snprintf(sc.name, sizeof sc.name, "%s", v);
        else if (!strcmp(k, "cc")) sscanf(v, "%d.%d", &sc.cc_major, &sc.cc_minor);
        else if (!strcmp(k, "sms")) sc.sms = atoi(v);
        else if (!strcmp(k, "clock_khz")) sc.clock_khz = atoi(v);
        else if (!strcmp(k, "mem_clock_khz")) sc.mem_clock_khz = atoi(v);
        else if (!strcmp(k, "bus_width")) sc.bus_width = atoi(v);
        else if (!strcmp(k, "wrong")) snprintf(sc.wrong, sizeof sc.wrong, "%s", v);
        else if (!strcmp(k, "flip_after")) sc.flip_after = strtoul(v, NULL, 10);
        else if (!strcmp(k, "crash")) snprintf(sc.crash, sizeof sc.crash, "%s", v);
        else if (!strcmp(k, "hang")) snprintf(sc.hang, sizeof sc.hang, "%s", v);
        else if (!strcmp(k, "hang_secs")) sc.hang_secs = strtoul(v, NULL, 10);
    }
    fclose(f);
}

/* The scripted misbehaviour every entry point goes through. */
static void trouble(const char *fn) {
    load_scenario();
    if (sc.crash[0] && !strcmp(sc.crash, fn)) {
        volatile int *nothing = NULL;
        *nothing = 1;
        raise(SIGSEGV);
    }
    if (sc.hang[0] && !strcmp(sc.hang, fn)) fake_sleep_secs((unsigned)sc.hang_secs);
}

static CUresult ready(const char *fn) {
    trouble(fn);
    return sc.initialised ? SUCCESS : NOT_INITIALIZED;
}

EXPORT CUresult cuInit(unsigned flags) {
    (void)flags;
    trouble("cuInit");
    if (sc.init_code) return sc.init_code;
    sc.initialised = 1;
    return SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v) {
    trouble("cuDriverGetVersion");
    if (!v) return INVALID_VALUE;
    *v = sc.driver;
    return SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n) {
    CUresult r = ready("cuDeviceGetCount");
    if (!r) *n = sc.devices;
    return r;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    CUresult r = ready("cuDeviceGet");
    if (r) return r;
    if (ordinal < 0 || ordinal >= sc.devices) return INVALID_DEVICE;
    *d = ordinal;
    return SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    CUresult r = ready("cuDeviceGetName");
    if (r) return r;
    if (d < 0 || d >= sc.devices) return INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", sc.name);
    return SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
    CUresult r = ready("cuDeviceTotalMem_v2");
    if (r) return r;
    if (d < 0 || d >= sc.devices) return INVALID_DEVICE;
    *bytes = (size_t)sc.total_mib << 20;
    return SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    CUresult r = ready("cuDeviceGetAttribute");
    if (r) return r;
    if (d < 0 || d >= sc.devices) return INVALID_DEVICE;
    switch (attr) {
    case 13: *v = sc.clock_khz; break;           /* CLOCK_RATE */
    case 16: *v = sc.sms; break;                 /* MULTIPROCESSOR_COUNT */
    case 33: *v = 0x17 + d; break;               /* PCI_BUS_ID, as the fake NVML */
    case 34: *v = 0; break;                      /* PCI_DEVICE_ID */
    case 36: *v = sc.mem_clock_khz; break;       /* MEMORY_CLOCK_RATE */
    case 37: *v = sc.bus_width; break;           /* GLOBAL_MEMORY_BUS_WIDTH */
    case 50: *v = 0; break;                      /* PCI_DOMAIN_ID */
    case 75: *v = sc.cc_major; break;
    case 76: *v = sc.cc_minor; break;
    default: *v = 0;
    }
    return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
    CUresult r = ready("cuDevicePrimaryCtxRetain");
    if (r) return r;
    if (d < 0 || d >= sc.devices) return INVALID_DEVICE;
    *ctx = &context_token;
    return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    (void)d;
    return ready("cuDevicePrimaryCtxRelease_v2");
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
    CUresult r = ready("cuCtxSetCurrent");
    if (!r && ctx != &context_token) return INVALID_CONTEXT;
    return r;
}

EXPORT CUresult cuCtxSynchronize(void) { return ready("cuCtxSynchronize"); }

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    CUresult r = ready("cuMemGetInfo_v2");
    if (r) return r;
    *free_bytes = (size_t)sc.free_mib << 20;
    *total = (size_t)sc.total_mib << 20;
    return SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    CUresult r = ready("cuMemAlloc_v2");
    if (r) return r;
    if (sc.allocs == 0) return OUT_OF_MEMORY;
    if (sc.allocs > 0) sc.allocs--;
    void *m = malloc(bytes ? bytes : 1);
    if (!m) return OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    return SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
    CUresult r = ready("cuMemFree_v2");
    if (!r) free((void *)(uintptr_t)p);
    return r;
}

#ifndef FAKE_OLD_DRIVER
EXPORT CUresult cuMemAllocHost_v2(void **p, size_t bytes) {
    CUresult r = ready("cuMemAllocHost_v2");
    if (r) return r;
    *p = malloc(bytes ? bytes : 1);
    return *p ? SUCCESS : OUT_OF_MEMORY;
}
#endif

EXPORT CUresult cuMemFreeHost(void *p) {
    CUresult r = ready("cuMemFreeHost");
    if (!r) free(p);
    return r;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
    CUresult r = ready("cuMemcpyHtoD_v2");
    if (!r) memcpy((void *)(uintptr_t)dst, src, n);
    return r;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
    CUresult r = ready("cuMemcpyDtoH_v2");
    if (!r) memcpy(dst, (const void *)(uintptr_t)src, n);
    return r;
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    CUresult r = ready("cuMemcpyDtoD_v2");
    if (!r) memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return r;
}

EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned v, size_t n) {
    CUresult r = ready("cuMemsetD32_v2");
    if (r) return r;
    unsigned *p = (unsigned *)(uintptr_t)dst;
    for (size_t i = 0; i < n; i++) p[i] = v;
    return SUCCESS;
}

/* Options 5/6 are CU_JIT_ERROR_LOG_BUFFER and its size, as the driver fills them. */
static void jit_log(unsigned n, const int *opts, void **vals, const char *msg) {
    char *buf = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == 5) buf = vals[i];
        if (opts[i] == 6) size = (size_t)(uintptr_t)vals[i];
    }
    if (buf && size) snprintf(buf, size, "%s", msg);
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *opts, void **vals) {
    CUresult r = ready("cuModuleLoadDataEx");
    if (r) return r;
    const char *ptx = image, *ver = strstr(ptx, "\n.version ");
    if (!ver) {
        jit_log(n, opts, vals, "ptxas fatal   : no .version directive");
        return INVALID_PTX;
    }
    double isa = atof(ver + 10);
    if (isa > sc.max_isa + 1e-9) {
        char msg[160];
        snprintf(msg, sizeof msg, "ptxas application ptx input, line 8; fatal   : Unsupported .version %.1f; current version is '%.1f'", isa, sc.max_isa);
        jit_log(n, opts, vals, msg);
        return UNSUPPORTED_PTX_VERSION;
    }
    *m = &module_token;
    return SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule m) {
    CUresult r = ready("cuModuleUnload");
    return r ? r : (m == &module_token ? SUCCESS : INVALID_VALUE);
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    CUresult r = ready("cuModuleGetFunction");
    if (r) return r;
    if (m != &module_token) return INVALID_VALUE;
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        if (!strcmp(functions[i].name, name)) {
            *f = &functions[i];
            return SUCCESS;
        }
    }
    return NOT_FOUND;
}

static float *fptr(void **params, int i) { return (float *)(uintptr_t)*(CUdeviceptr *)params[i]; }

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
    (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shared; (void)stream; (void)extra;
    CUresult r = ready("cuLaunchKernel");
    if (r) return r;
    if (!f || !params) return INVALID_VALUE;
    int n = *(int *)params[0];
    if (!strcmp(f->name, "saxpy")) {
        float a = *(float *)params[1], *x = fptr(params, 2), *y = fptr(params, 3);
        for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
        if (!strcmp(sc.wrong, "saxpy") && n > 12345) y[12345] += 1.0f;
    } else if (!strcmp(f->name, "sgemm")) {
        const float *A = fptr(params, 1), *B = fptr(params, 2);
        float *C = fptr(params, 3);
        memset(C, 0, (size_t)n * (size_t)n * sizeof *C);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) {
                float a = A[(size_t)i * n + k];
                const float *b = B + (size_t)k * n;
                float *c = C + (size_t)i * n;
                for (int j = 0; j < n; j++) c[j] += a * b[j];
            }
        sc.sgemm_launches++;
        if (!strcmp(sc.wrong, "sgemm") || sc.sgemm_launches > sc.flip_after) C[(size_t)n * n / 2 + 7] += 0.5f;
    } else if (!strcmp(f->name, "count_mismatches")) {
        const float *a = fptr(params, 1), *b = fptr(params, 2);
        unsigned *errors = (unsigned *)(uintptr_t)*(CUdeviceptr *)params[3];
        for (int i = 0; i < n; i++)
            if (memcmp(&a[i], &b[i], sizeof(float))) (*errors)++;
    } else {
        return INVALID_VALUE;
    }
    return SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult e, const char **s) {
    (void)e;
    *s = "CUDA_ERROR_FAKE";
    return SUCCESS;
}
