/* Test-only shim for running the Windows build under Wine 8.0 (Debian bookworm's), which lacks
 * ProcessPrng in bcryptprimitives.dll: Rust's standard library (1.78 and later) imports it, so
 * every Rust program fails to start there. This DLL exports ProcessPrng over advapi32's
 * RtlGenRandom (SystemFunction036). packaging/check.sh builds it with mingw and puts it in the
 * Wine prefix only when the executables do not start without it. It never ships. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
