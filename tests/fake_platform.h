/*
 * The few platform services the test-only fake NVML and CUDA libraries need, for Linux (the
 * shared objects the tests load) and Windows (nvml.dll / nvcuda.dll cross-built with mingw and run
 * under Wine by packaging/check.sh): the path of a file beside the library itself, a lock, sleeping,
 * this process's id and its direct children.
 */
#ifndef FAKE_PLATFORM_H
#define FAKE_PLATFORM_H

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <tlhelp32.h>
#else
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
typedef SRWLOCK fake_lock_t;
#define FAKE_LOCK_INIT SRWLOCK_INIT
static inline void fake_lock(fake_lock_t *l) { AcquireSRWLockExclusive(l); }
static inline void fake_unlock(fake_lock_t *l) { ReleaseSRWLockExclusive(l); }
static inline void fake_sleep_secs(unsigned s) { Sleep(s * 1000u); }
static inline unsigned fake_pid(void) { return (unsigned)GetCurrentProcessId(); }
#else
#define EXPORT __attribute__((visibility("default")))
typedef pthread_mutex_t fake_lock_t;
#define FAKE_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
static inline void fake_lock(fake_lock_t *l) { pthread_mutex_lock(l); }
static inline void fake_unlock(fake_lock_t *l) { pthread_mutex_unlock(l); }
static inline void fake_sleep_secs(unsigned s) { sleep(s); }
static inline unsigned fake_pid(void) { return (unsigned)getpid(); }
#endif

/* `name` in the directory of the library holding `addr`, into out (empty when unknown). */
static inline void fake_sibling_path(void *addr, const char *name, char *out, size_t len) {
    out[0] = 0;
#ifdef _WIN32
    HMODULE self = NULL;
    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCSTR)addr, &self))
        return;
    DWORD n = GetModuleFileNameA(self, out, (DWORD)len);
    if (n == 0 || n >= len) { out[0] = 0; return; }
    char *slash = strrchr(out, '\\');
#else
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fname) return;
    snprintf(out, len, "%s", info.dli_fname);
    char *slash = strrchr(out, '/');
#endif
    if (slash) snprintf(slash + 1, len - (size_t)(slash + 1 - out), "%s", name);
    else out[0] = 0;
}

/* The process ids of this process's direct children (at most max); returns how many. */
static inline unsigned fake_children(unsigned *pids, unsigned max) {
    unsigned n = 0, me = fake_pid();
#ifdef _WIN32
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    if (snap == INVALID_HANDLE_VALUE) return 0;
    PROCESSENTRY32 e;
    e.dwSize = sizeof e;
    for (BOOL more = Process32First(snap, &e); more && n < max; more = Process32Next(snap, &e))
        if (e.th32ParentProcessID == me && e.th32ProcessID != me) pids[n++] = (unsigned)e.th32ProcessID;
    CloseHandle(snap);
#else
    DIR *dir = opendir("/proc");
    struct dirent *e;
    while (dir && (e = readdir(dir)) && n < max) {
        char path[300], buf[512];
        unsigned pid = (unsigned)strtoul(e->d_name, NULL, 10);
        if (!pid) continue;
        snprintf(path, sizeof path, "/proc/%u/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = 0;
        char *close = strrchr(buf, ')');
        unsigned ppid = 0;
        if (close && sscanf(close + 2, "%*c %u", &ppid) == 1 && ppid == me) pids[n++] = pid;
    }
    if (dir) closedir(dir);
#endif
    return n;
}

#endif
