/*
 * A stand-in for libnvidia-ml.so.1, for gpu-doctor's tests only: never shipped or installed.
 *
 * It exports the NVML entry points gpu-doctor calls (through nvml-wrapper) and answers them from
 * a scenario file: the path in FAKE_NVML_SCENARIO, else "fake-nvml.scenario" in the directory
 * the library was loaded from, else two healthy GPUs. Scenario files hold "key = value" lines:
 *
 *   gpus = 2              number of GPUs (0-16)
 *   init = 0              nvmlInit_v2's return code (9 DRIVER_NOT_LOADED, 18 LIB_RM_VERSION_MISMATCH)
 *   unsupported = all     every optional query returns NOT_SUPPORTED (3), as on GeForce or WSL
 *   silent_gpu = 0        this GPU answers every live query (utilization, memory, temperature,
 *                         power, clocks) with UNKNOWN (999), its inventory still readable: a GPU
 *                         or its GSP firmware that stopped answering
 *   handle_gpu = 1        nvmlDeviceGetHandleByIndex refuses this GPU ...
 *   handle_code = 8       ... with this code (8 INSUFFICIENT_POWER, 11 IRQ_ISSUE, 10 TIMEOUT,
 *                         16 RESET_REQUIRED, 14 CORRUPTED_INFOROM), as NVML documents it can
 *   lost_gpu = 1          this GPU returns GPU_IS_LOST (15) ...
 *   lost_after = 3        ... once it has answered this many utilization queries
 *   hang = nvmlDeviceGetTemperature   this function blocks ...
 *   hang_after = 2        ... on the call after this many calls (once) ...
 *   hang_secs = 30        ... for this long, then answers normally
 *   processes = 4         process-list queries return this code (4 NO_PERMISSION)
 *   driver = 550.54.15    driver version string
 *   pcie_gen = 4          current PCIe link generation (the maximum is Gen4 x16) ...
 *   pcie_width = 16       ... and width
 *   util = 10             GPU utilization fixed at this value (default: a wave between 50 and 99)
 *   mig = 1               MIG mode is on (current and pending) ...
 *   mig_devices = 0       ... with this many MIG devices (GPU + compute instances) created
 *   fans = 0              the GPUs have no fan: fan queries return INVALID_ARGUMENT (2), as an
 *                         H200 with driver 580.159.04 answered (scripts/on-gpu.sh, 2026-11-30)
 *   driver_model = 0      the Windows driver model, current and pending (0 WDDM, 1 TCC, 2 MCDM);
 *                         "0,1" for a change waiting for a reboot
 *   child_processes = 1   the compute process list is the loading process's children (their
 *                         PIDs, 2 GiB each), so a launched job's GPU memory can be attributed
 *
 *   vram_dir = /tmp/x     (POSIX) a test workload's GPU use: each file in this folder named by a
 *                         live process's PID holds "BYTES UTIL"; the compute process list is those
 *                         processes with their bytes, memory used is 1 GiB plus their sum and
 *                         utilization their summed UTIL (at most 100; 0 with none), so a launched
 *                         job's memory and load move with its parameters (tests/tune_workload)
 *   vram_total_gib = 24   the GPUs' memory, GiB (default 80)
 *
 * FAKE_NVML_INIT_MARKER, when set, names a file nvmlInit_v2 appends a line to.
 *
 * Compiled with -DFAKE_OLD_DRIVER it lacks the newer symbols (versioned memory, fan and process
 * queries), like a library from an old driver.
 *
 * The same file builds the Windows nvml.dll with mingw (packaging/check.sh puts it in the Wine
 * prefix's System32, where the driver puts the real one): fake_platform.h maps the few POSIX calls
 * (the library's own path, a lock, sleeping, the child processes) onto Win32.
 */
#include "../fake_platform.h"

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;

enum {
    OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NO_PERMISSION = 4,
    NOT_FOUND = 6, INSUFFICIENT_SIZE = 7, GPU_IS_LOST = 15, UNKNOWN = 999,
};

#define MAX_GPUS 16
#define GIB (1024ULL * 1024ULL * 1024ULL)

struct fake_device { unsigned index; unsigned long util_calls, process_util_calls; };

static struct {
    int loaded, initialised;
    unsigned gpus;
    int init_code, unsupported, lost_gpu, processes_code, silent_gpu, handle_gpu, handle_code;
    unsigned long lost_after, hang_after, hang_secs, hang_calls;
    unsigned pcie_gen, pcie_width;
    int util, child_processes, fans, mig, mig_devices, model_now, model_pending;
    unsigned long long vram_total;
    char hang[128], driver[64], vram_dir[PATH_MAX];
} sc;
static struct fake_device devices[MAX_GPUS];
static fake_lock_t lock = FAKE_LOCK_INIT;

static void trim(char *s) {
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    char *b = s;
    while (*b == ' ' || *b == '\t') b++;
    memmove(s, b, strlen(b) + 1);
}

/* Reads the scenario; called with the lock held, once. */
static void read_scenario(void) {
    sc.gpus = 2;
    sc.lost_gpu = -1;
    sc.silent_gpu = -1;
    sc.handle_gpu = -1;
    strcpy(sc.driver, "550.54.15");
    sc.pcie_gen = 4;
    sc.pcie_width = 16;
    sc.util = -1;
    sc.fans = 1;
    sc.vram_total = 80 * GIB;
    char path[PATH_MAX] = {0};
    const char *env = getenv("FAKE_NVML_SCENARIO");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        fake_sibling_path((void *)read_scenario, "fake-nvml.scenario", path, sizeof path);
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
        if (!strcmp(k, "gpus")) sc.gpus = (unsigned)strtoul(v, NULL, 10) > MAX_GPUS ? MAX_GPUS : (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(k, "init")) sc.init_code = atoi(v);
        else if (!strcmp(k, "unsupported")) sc.unsupported = !strcmp(v, "all");
        else if (!strcmp(k, "silent_gpu")) sc.silent_gpu = atoi(v);
        else if (!strcmp(k, "handle_gpu")) sc.handle_gpu = atoi(v);
        else if (!strcmp(k, "handle_code")) sc.handle_code = atoi(v);
        else if (!strcmp(k, "lost_gpu")) sc.lost_gpu = atoi(v);
        else if (!strcmp(k, "lost_after")) sc.lost_after = strtoul(v, NULL, 10);
        else if (!strcmp(k, "hang")) snprintf(sc.hang, sizeof sc.hang, "%s", v);
        else if (!strcmp(k, "hang_after")) sc.hang_after = strtoul(v, NULL, 10);
        else if (!strcmp(k, "hang_secs")) sc.hang_secs = strtoul(v, NULL, 10);
        else if (!strcmp(k, "processes")) sc.processes_code = atoi(v);
        else if (!strcmp(k, "driver")) snprintf(sc.driver, sizeof sc.driver, "%s", v);
        else if (!strcmp(k, "pcie_gen")) sc.pcie_gen = (unsigned)atoi(v);
        else if (!strcmp(k, "pcie_width")) sc.pcie_width = (unsigned)atoi(v);
        else if (!strcmp(k, "util")) sc.util = atoi(v);
        else if (!strcmp(k, "child_processes")) sc.child_processes = atoi(v);
        else if (!strcmp(k, "fans")) sc.fans = atoi(v);
        else if (!strcmp(k, "vram_dir")) snprintf(sc.vram_dir, sizeof sc.vram_dir, "%s", v);
        else if (!strcmp(k, "vram_total_gib")) sc.vram_total = strtoull(v, NULL, 10) * GIB;
        else if (!strcmp(k, "mig")) sc.mig = atoi(v);
        else if (!strcmp(k, "mig_devices")) sc.mig_devices = atoi(v);
        else if (!strcmp(k, "driver_model")) {
            sc.model_now = sc.model_pending = atoi(v);
            const char *comma = strchr(v, ',');
            if (comma) sc.model_pending = atoi(comma + 1);
        }
    }
    fclose(f);
}

/* The workload processes of vram_dir (see the header): up to max of them into pids/bytes (and
 * each one's utilization into each, when given); their summed utilization into *util. Files of
 * processes that ended are skipped. */
static unsigned workload_use_each(unsigned *pids, unsigned long long *bytes, unsigned *each, unsigned max,
                                  unsigned *util) {
    unsigned n = 0, u = 0;
#ifndef _WIN32
    DIR *dir = sc.vram_dir[0] ? opendir(sc.vram_dir) : NULL;
    struct dirent *e;
    while (dir && (e = readdir(dir)) && n < max) {
        unsigned pid = (unsigned)strtoul(e->d_name, NULL, 10);
        if (!pid || kill((pid_t)pid, 0) != 0) continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", sc.vram_dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned long long b = 0;
        unsigned pu = 0;
        int got = fscanf(f, "%llu %u", &b, &pu);
        fclose(f);
        if (got < 1) continue;
        pids[n] = pid;
        if (each) each[n] = got == 2 ? pu : 0;
        bytes[n++] = b;
        u += got == 2 ? pu : 0;
    }
    if (dir) closedir(dir);
#else
    (void)pids; (void)bytes; (void)max; (void)each;
#endif
    if (util) *util = u > 100 ? 100 : u;
    return n;
}
static unsigned workload_use(unsigned *pids, unsigned long long *bytes, unsigned max, unsigned *util) {
    return workload_use_each(pids, bytes, NULL, max, util);
}

static unsigned wave(nvmlDevice_t d, unsigned span);

/* Memory used on a device: the workload's when vram_dir is set, else a slow wave. */
static unsigned long long used_memory(nvmlDevice_t d) {
    if (!sc.vram_dir[0]) return 20 * GIB + wave(d, 10) * GIB;
    unsigned pids[64];
    unsigned long long bytes[64], sum = GIB;
    unsigned n = workload_use(pids, bytes, 64, NULL);
    for (unsigned i = 0; i < n; i++) sum += bytes[i];
    return sum;
}

/* Blocks once, on the configured call of the configured function. */
static void maybe_hang(const char *fn) {
    if (!sc.hang[0] || strcmp(sc.hang, fn)) return;
    fake_lock(&lock);
    unsigned long n = sc.hang_calls++;
    fake_unlock(&lock);
    if (n == sc.hang_after) fake_sleep_secs((unsigned)sc.hang_secs);
}

static nvmlReturn_t check(nvmlDevice_t d, const char *fn) {
    if (!sc.initialised) return UNINITIALIZED;
    if (!d || d < devices || d >= devices + sc.gpus) return INVALID_ARGUMENT;
    maybe_hang(fn);
    if ((int)d->index == sc.lost_gpu && d->util_calls >= sc.lost_after) return GPU_IS_LOST;
    if ((int)d->index == sc.silent_gpu) {
        static const char *live[] = {"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo",
                                     "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetTemperature",
                                     "nvmlDeviceGetPowerUsage", "nvmlDeviceGetClockInfo"};
        for (unsigned i = 0; i < sizeof live / sizeof *live; i++)
            if (!strcmp(fn, live[i])) return UNKNOWN;
    }
    return OK;
}

/* For queries a GeForce or WSL driver may not support. */
static nvmlReturn_t optional(nvmlDevice_t d, const char *fn) {
    nvmlReturn_t r = check(d, fn);
    if (r == OK && sc.unsupported) return NOT_SUPPORTED;
    return r;
}

static nvmlReturn_t copy_str(char *dst, unsigned len, const char *src) {
    if (!dst) return INVALID_ARGUMENT;
    if (strlen(src) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(dst, src);
    return OK;
}

/* A value that changes from sample to sample: 0..span-1. */
static unsigned wave(nvmlDevice_t d, unsigned span) {
    return (unsigned)((d->util_calls * 7 + d->index * 13) % span);
}

/* The scenario is read once, under the lock, before any caller sees it: two threads that
 * initialise at once (the sampler and the checklist's probe) must not see the defaults while the
 * other is still reading the file. */
static void load_scenario(void) {
    fake_lock(&lock);
    if (!sc.loaded) {
        read_scenario();
        sc.loaded = 1;
    }
    fake_unlock(&lock);
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
    load_scenario();
    /* Lets a test prove that NVML was (or was not) initialised. */
    const char *marker = getenv("FAKE_NVML_INIT_MARKER");
    FILE *m = marker && *marker ? fopen(marker, "a") : NULL;
    if (m) { fputs("nvmlInit_v2\n", m); fclose(m); }
    maybe_hang("nvmlInit_v2");
    if (sc.init_code) return sc.init_code;
    for (unsigned i = 0; i < MAX_GPUS; i++) devices[i].index = i;
    /* Like the real library, initialisation is reference counted: every nvmlInit needs its own
     * nvmlShutdown, so a second user (the checklist's probe) cannot shut NVML down under the
     * sampler. */
    fake_lock(&lock);
    sc.initialised++;
    fake_unlock(&lock);
    return OK;
}
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned flags) { (void)flags; return nvmlInit_v2(); }
EXPORT nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
EXPORT nvmlReturn_t nvmlShutdown(void) {
    fake_lock(&lock);
    nvmlReturn_t r = sc.initialised > 0 ? OK : UNINITIALIZED;
    if (sc.initialised > 0) sc.initialised--;
    fake_unlock(&lock);
    return r;
}
EXPORT const char *nvmlErrorString(nvmlReturn_t r) { (void)r; return "fake NVML error"; }

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned len) {
    return sc.initialised ? copy_str(v, len, sc.driver) : UNINITIALIZED;
}
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned len) {
    return sc.initialised ? copy_str(v, len, "12.550.54.15") : UNINITIALIZED;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) {
    if (!sc.initialised) return UNINITIALIZED;
    *v = 12040;
    return OK;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }
EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned pid, char *name, unsigned len) {
    (void)pid;
    return sc.initialised ? copy_str(name, len, "fake-process") : UNINITIALIZED;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n) {
    if (!sc.initialised) return UNINITIALIZED;
    *n = sc.gpus;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned *n) { return nvmlDeviceGetCount_v2(n); }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d) {
    if (!sc.initialised) return UNINITIALIZED;
    if (i >= sc.gpus || !d) return INVALID_ARGUMENT;
    if ((int)i == sc.handle_gpu && sc.handle_code) return (nvmlReturn_t)sc.handle_code;
    *d = &devices[i];
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned len) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetName");
    return r ? r : copy_str(name, len, "NVIDIA Fake Test GPU");
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned len) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetUUID");
    if (r) return r;
    char buf[80];
    snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-4000-8000-%012u", d->index);
    return copy_str(uuid, len, buf);
}

typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetPciInfo_v3");
    if (r) return r;
    memset(p, 0, sizeof *p);
    p->bus = 0x17 + d->index;
    p->pciDeviceId = 0x20b210de;
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    return OK;
}

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMemoryInfo");
    if (r) return r;
    m->total = sc.vram_total;
    m->used = used_memory(d);
    m->free = m->used < m->total ? m->total - m->used : 0;
    return OK;
}
#ifndef FAKE_OLD_DRIVER
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMemoryInfo_v2");
    if (r) return r;
    m->total = sc.vram_total;
    m->reserved = GIB / 2;
    m->used = used_memory(d);
    m->free = m->used + m->reserved < m->total ? m->total - m->reserved - m->used : 0;
    return OK;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned *mw) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetPowerManagementDefaultLimit");
    if (!r) *mw = 400000;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetEnforcedPowerLimit");
    if (!r) *mw = 400000;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetPowerUsage");
    if (!r) *mw = 250000 + wave(d, 100) * 1000;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetMaxClockInfo");
    if (!r) *mhz = type == 2 ? 1593 : 1410; /* 2 = memory clock */
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetClockInfo");
    if (!r) *mhz = type == 2 ? 1593 : 1300 + wave(d, 100);
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned *g) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetMaxPcieLinkGeneration");
    if (!r) *g = 4;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned *w) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetMaxPcieLinkWidth");
    if (!r) *w = 16;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned *g) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetCurrPcieLinkGeneration");
    if (!r) *g = sc.pcie_gen;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned *w) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetCurrPcieLinkWidth");
    if (!r) *w = sc.pcie_width;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int type, unsigned *c) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetTemperatureThreshold");
    if (!r) *c = type == 1 ? 87 : 92; /* 1 = slowdown */
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetCudaComputeCapability");
    if (!r) { *major = 8; *minor = 0; }
    return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *enabled) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetPersistenceMode");
    if (!r) *enabled = 1;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t d, int *current, int *pending) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetDriverModel");
    if (!r) { *current = sc.model_now; *pending = sc.model_pending; }
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int *mode) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetComputeMode");
    if (!r) *mode = 0;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *current, unsigned *pending) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMigMode");
    if (r) return r;
    if (!sc.mig) return NOT_SUPPORTED; /* not a MIG-capable board */
    *current = 1;
    *pending = 1;
    return OK;
}
#ifndef FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned *count) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMaxMigDeviceCount");
    if (r) return r;
    if (!sc.mig) return NOT_SUPPORTED;
    *count = 7;
    return OK;
}
/* MIG device handles are the parent's handle: gpu-doctor only counts them. */
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned index, nvmlDevice_t *mig) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetMigDeviceHandleByIndex");
    if (r) return r;
    if (!sc.mig) return NOT_SUPPORTED;
    if ((int)index >= sc.mig_devices) return 6; /* NVML_ERROR_NOT_FOUND */
    *mig = d;
    return OK;
}
#endif
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetRemappedRows");
    if (!r) { *corr = 0; *unc = 0; *pending = 0; *failed = 0; }
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetRetiredPagesPendingStatus");
    if (!r) *pending = 0;
    return r;
}

typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
    nvmlReturn_t r = check(d, "nvmlDeviceGetUtilizationRates");
    if (r) return r;
    fake_lock(&lock);
    d->util_calls++;
    fake_unlock(&lock);
    if (sc.unsupported) return NOT_SUPPORTED;
    unsigned pids[64], load = 0;
    unsigned long long bytes[64];
    if (sc.vram_dir[0]) workload_use(pids, bytes, 64, &load);
    u->gpu = sc.util >= 0 ? (unsigned)sc.util : sc.vram_dir[0] ? load : 50 + wave(d, 50);
    u->memory = 20 + wave(d, 30);
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *c) {
    (void)sensor;
    nvmlReturn_t r = optional(d, "nvmlDeviceGetTemperature");
    if (!r) *c = 55 + wave(d, 20);
    return r;
}
#ifndef FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t d, unsigned fan, unsigned *pct) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetFanSpeed_v2");
    if (!r && (int)fan >= sc.fans) return INVALID_ARGUMENT;
    if (!r) *pct = 40 + wave(d, 30);
    return r;
}
#endif
EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned *pct) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetFanSpeed");
    if (!r && sc.fans < 1) return INVALID_ARGUMENT;
    if (!r) *pct = 40 + wave(d, 30);
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int *p) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetPerformanceState");
    if (!r) *p = 0;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *mask) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!r) *mask = 0;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned *u, unsigned *period) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetEncoderUtilization");
    if (!r) { *u = 0; *period = 167000; }
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned *u, unsigned *period) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetDecoderUtilization");
    if (!r) { *u = 0; *period = 167000; }
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *n) {
    (void)type; (void)counter;
    nvmlReturn_t r = optional(d, "nvmlDeviceGetTotalEccErrors");
    if (!r) *n = 0;
    return r;
}
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *kib_s) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetPcieThroughput");
    if (!r) *kib_s = (counter == 1 ? 900000u : 120000u) + wave(d, 1000) * 100; /* 1 = receive */
    return r;
}

#ifndef FAKE_OLD_DRIVER
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
/* The loading process's direct children. */
static nvmlReturn_t child_list(unsigned *count, nvmlProcessInfo_t *out) {
    unsigned pids[64];
    unsigned n = fake_children(pids, 64);
    if (!out || *count < n) { *count = n; return n ? INSUFFICIENT_SIZE : OK; }
    for (unsigned i = 0; i < n; i++) {
        out[i].pid = pids[i];
        out[i].usedGpuMemory = 2ULL * GIB;
        out[i].gpuInstanceId = out[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *count = n;
    return OK;
}

static nvmlReturn_t processes(nvmlDevice_t d, const char *fn, int compute, unsigned *count, nvmlProcessInfo_t *out) {
    nvmlReturn_t r = optional(d, fn);
    if (r) return r;
    if (sc.processes_code) return sc.processes_code;
    if (sc.child_processes && compute) return child_list(count, out);
    if (sc.vram_dir[0] && compute) {
        unsigned pids[64];
        unsigned long long bytes[64];
        unsigned m = workload_use(pids, bytes, 64, NULL);
        if (!out || *count < m) { *count = m; return m ? INSUFFICIENT_SIZE : OK; }
        for (unsigned i = 0; i < m; i++) {
            out[i].pid = pids[i];
            out[i].usedGpuMemory = bytes[i];
            out[i].gpuInstanceId = out[i].computeInstanceId = 0xFFFFFFFFu;
        }
        *count = m;
        return OK;
    }
    unsigned n = compute ? 2 : 0;
    if (!out || *count < n) { *count = n; return n ? INSUFFICIENT_SIZE : OK; }
    for (unsigned i = 0; i < n; i++) {
        out[i].pid = i == 0 ? fake_pid() : 4000000 + d->index; /* the second is in no /proc */
        out[i].usedGpuMemory = (unsigned long long)(i + 1) * 3 * GIB;
        out[i].gpuInstanceId = out[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *count = n;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_t *out) {
    return processes(d, "nvmlDeviceGetComputeRunningProcesses_v3", 1, count, out);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_t *out) {
    return processes(d, "nvmlDeviceGetGraphicsRunningProcesses_v3", 0, count, out);
}
EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_t *out) {
    return processes(d, "nvmlDeviceGetMPSComputeRunningProcesses_v3", 0, count, out);
}

typedef struct {
    unsigned pid;
    unsigned long long timeStamp;
    unsigned smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
/* One sample per process that ran something, newer than last_seen: the default list's first
 * process runs the GPU's kernels and the second (in no /proc) decodes video; a vram_dir workload
 * each its own UTIL; launched children (child_processes) run nothing, so there are no samples and
 * the answer is NOT_FOUND, as NVML gives it. */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *out,
                                                    unsigned *count, unsigned long long last_seen) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetProcessUtilization");
    if (r) return r;
    if (sc.processes_code) return sc.processes_code;
    if (!count) return INVALID_ARGUMENT;
    nvmlProcessUtilizationSample_t s[64];
    unsigned n = 0;
    if (sc.vram_dir[0]) {
        unsigned pids[64], each[64];
        unsigned long long bytes[64];
        unsigned m = workload_use_each(pids, bytes, each, 64, NULL);
        for (unsigned i = 0; i < m; i++) {
            if (!each[i]) continue;
            s[n] = (nvmlProcessUtilizationSample_t){pids[i], 0, each[i] > 100 ? 100 : each[i], 0, 0, 0};
            n++;
        }
    } else if (!sc.child_processes) {
        unsigned sm = sc.util >= 0 ? (unsigned)sc.util : 50 + wave(d, 50);
        s[n++] = (nvmlProcessUtilizationSample_t){fake_pid(), 0, sm, 20, 0, 0};
        s[n++] = (nvmlProcessUtilizationSample_t){4000000 + d->index, 0, 0, 5, 0, 25};
    }
    fake_lock(&lock);
    unsigned long long now = (unsigned long long)(++d->process_util_calls) * 1000000ULL;
    fake_unlock(&lock);
    if (now <= last_seen) n = 0;
    if (!n) { *count = 0; return NOT_FOUND; }
    if (!out || *count < n) { *count = n; return INSUFFICIENT_SIZE; }
    for (unsigned i = 0; i < n; i++) { out[i] = s[i]; out[i].timeStamp = now; }
    *count = n;
    return OK;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *v, unsigned len) {
    nvmlReturn_t r = optional(d, "nvmlDeviceGetVbiosVersion");
    return r ? r : copy_str(v, len, "96.00.89.00.01");
}
