/*
 * nvml.c: the GPU's state through NVML, loaded at run time (see nvml.h). NVML's header is not
 * needed: the few types and constants used here are NVML's stable ABI (an int return code, an
 * opaque device handle, enum values that have not changed since NVML 3), declared below, and
 * every function is looked up with dlsym. A function the driver lacks (an older driver without
 * nvmlDeviceGetCurrentClocksEventReasons, say) reads as "unknown", never as an error.
 *
 * Invariant: an open bench__nvml holds one nvmlInit_v2 (NVML counts them) and one dlopen
 * reference, both undone by bench__nvml_close.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "probes/nvml.h"

/* ---- NVML's ABI (nvml.h of the driver's development kit) ---- */

typedef int nvml_return;      /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef void *nvml_device;    /* nvmlDevice_t */
enum { NVML_OK = 0 };
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };     /* nvmlClockType_t */
enum { NVML_TEMPERATURE_GPU = 0 };                  /* nvmlTemperatureSensors_t */

typedef nvml_return (*fn_void)(void);
typedef const char *(*fn_error_string)(nvml_return);
typedef nvml_return (*fn_by_bus_id)(const char *, nvml_device *);
typedef nvml_return (*fn_by_index)(unsigned, nvml_device *);
typedef nvml_return (*fn_clock)(nvml_device, int, unsigned *);
typedef nvml_return (*fn_uint)(nvml_device, unsigned *);
typedef nvml_return (*fn_temperature)(nvml_device, int, unsigned *);
typedef nvml_return (*fn_reasons)(nvml_device, unsigned long long *);
typedef nvml_return (*fn_lock)(nvml_device, unsigned, unsigned);
typedef nvml_return (*fn_device)(nvml_device);

struct bench__nvml {
    void *lib;
    nvml_device dev;
    fn_void shutdown;
    fn_error_string error_string;
    fn_clock clock;            /* nvmlDeviceGetClockInfo */
    fn_clock max_clock;        /* nvmlDeviceGetMaxClockInfo */
    fn_clock default_clock;    /* nvmlDeviceGetDefaultApplicationsClock */
    fn_temperature temperature; /* nvmlDeviceGetTemperature */
    fn_uint power;             /* nvmlDeviceGetPowerUsage, mW */
    fn_reasons reasons;        /* ...ClocksEventReasons, or ...ClocksThrottleReasons before */
    fn_lock lock;              /* nvmlDeviceSetGpuLockedClocks */
    fn_device unlock;          /* nvmlDeviceResetGpuLockedClocks */
};

const char *bench__nvml_library(void)
{
    const char *p = getenv("BENCH_NVML_LIBRARY");
    return p && *p ? p : "libnvidia-ml.so.1";
}

static const char *err_text(const bench__nvml *n, nvml_return rc)
{
    const char *s = n->error_string ? n->error_string(rc) : NULL;
    return s ? s : "unknown NVML error";
}

/* POSIX's way to turn dlsym's data pointer into a function pointer. */
#define SYM(dst, lib, name) (*(void **)&(dst) = dlsym((lib), (name)))

int bench__nvml_open(bench__nvml **out, const char *pci_bus_id, char *msg, size_t msglen)
{
    *out = NULL;
    const char *path = bench__nvml_library();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        bench__msg(msg, msglen, "%s could not be loaded (%s)", path, why ? why : "no reason");
        return BENCH_EUNAVAIL;
    }
    bench__nvml *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(lib);
        bench__msg(msg, msglen, "out of memory");
        return BENCH_EUNAVAIL;
    }
    n->lib = lib;
    fn_void init;
    fn_by_bus_id by_bus;
    fn_by_index by_index;
    SYM(init, lib, "nvmlInit_v2");
    SYM(n->shutdown, lib, "nvmlShutdown");
    SYM(n->error_string, lib, "nvmlErrorString");
    SYM(by_bus, lib, "nvmlDeviceGetHandleByPciBusId_v2");
    SYM(by_index, lib, "nvmlDeviceGetHandleByIndex_v2");
    SYM(n->clock, lib, "nvmlDeviceGetClockInfo");
    SYM(n->max_clock, lib, "nvmlDeviceGetMaxClockInfo");
    SYM(n->default_clock, lib, "nvmlDeviceGetDefaultApplicationsClock");
    SYM(n->temperature, lib, "nvmlDeviceGetTemperature");
    SYM(n->power, lib, "nvmlDeviceGetPowerUsage");
    SYM(n->reasons, lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->reasons) /* drivers before 535 have only the older name */
        SYM(n->reasons, lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    SYM(n->lock, lib, "nvmlDeviceSetGpuLockedClocks");
    SYM(n->unlock, lib, "nvmlDeviceResetGpuLockedClocks");
    if (!init || !n->shutdown || (!by_bus && !by_index)) {
        bench__msg(msg, msglen, "%s lacks nvmlInit_v2, nvmlShutdown or a device lookup", path);
        dlclose(lib);
        free(n);
        return BENCH_EUNAVAIL;
    }
    nvml_return rc = init();
    if (rc != NVML_OK) {
        bench__msg(msg, msglen, "nvmlInit: %s", err_text(n, rc));
        dlclose(lib);
        free(n);
        return BENCH_EUNAVAIL;
    }
    /* CUDA and NVML number devices differently (CUDA_VISIBLE_DEVICES, fastest first): the PCI
     * bus id names the same GPU for both. */
    if (pci_bus_id && *pci_bus_id && by_bus)
        rc = by_bus(pci_bus_id, &n->dev);
    else if (by_index)
        rc = by_index(0, &n->dev);
    else
        rc = -1;
    if (rc != NVML_OK) {
        bench__msg(msg, msglen, "NVML has no device %s (%s)",
                   pci_bus_id && *pci_bus_id ? pci_bus_id : "0",
                   rc == -1 ? "no lookup by index" : err_text(n, rc));
        n->shutdown();
        dlclose(lib);
        free(n);
        return BENCH_EUNAVAIL;
    }
    *out = n;
    return 0;
}

void bench__nvml_close(bench__nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

/* One clock query, MHz, or -1. */
static double clock_mhz(fn_clock f, nvml_device dev, int which)
{
    unsigned v = 0;
    return f && f(dev, which, &v) == NVML_OK ? (double)v : -1.0;
}

void bench__nvml_read(bench__nvml *n, bench__gpu_state *st)
{
    st->sm_clock_mhz = clock_mhz(n->clock, n->dev, NVML_CLOCK_SM);
    st->mem_clock_mhz = clock_mhz(n->clock, n->dev, NVML_CLOCK_MEM);
    unsigned v = 0;
    st->temperature_c = n->temperature && n->temperature(n->dev, NVML_TEMPERATURE_GPU, &v) ==
                                              NVML_OK
                            ? (double)v
                            : -1.0;
    st->power_w = n->power && n->power(n->dev, &v) == NVML_OK ? (double)v / 1000.0 : -1.0;
    unsigned long long r = 0;
    st->reasons = n->reasons && n->reasons(n->dev, &r) == NVML_OK ? (long long)(r & 0xffffffffu)
                                                                   : -1;
}

void bench__nvml_clocks(bench__nvml *n, bench__gpu_clocks *c)
{
    c->sm_default_mhz = clock_mhz(n->default_clock, n->dev, NVML_CLOCK_SM);
    c->sm_max_mhz = clock_mhz(n->max_clock, n->dev, NVML_CLOCK_SM);
    c->mem_max_mhz = clock_mhz(n->max_clock, n->dev, NVML_CLOCK_MEM);
}

int bench__nvml_lock_sm_clock(bench__nvml *n, unsigned mhz, char *msg, size_t msglen)
{
    if (!n->lock) {
        bench__msg(msg, msglen, "this driver's NVML cannot lock clocks");
        return BENCH_EUNAVAIL;
    }
    nvml_return rc = n->lock(n->dev, mhz, mhz);
    if (rc != NVML_OK) {
        bench__msg(msg, msglen, "nvmlDeviceSetGpuLockedClocks: %s", err_text(n, rc));
        return BENCH_EUNAVAIL;
    }
    return 0;
}

int bench__nvml_unlock_sm_clock(bench__nvml *n, char *msg, size_t msglen)
{
    nvml_return rc = n->unlock ? n->unlock(n->dev) : -1;
    if (rc != NVML_OK) {
        bench__msg(msg, msglen, "nvmlDeviceResetGpuLockedClocks: %s",
                   n->unlock ? err_text(n, rc) : "not in this driver");
        return BENCH_EUNAVAIL;
    }
    return 0;
}

const char *bench__nvml_reasons_text(long long reasons, char *buf, size_t len)
{
    static const struct {
        long long bit;
        const char *name;
    } names[] = {
        {0x1, "idle"},
        {0x2, "application clock setting"},
        {0x4, "power cap"},
        {0x8, "hardware slowdown"},
        {0x10, "sync boost"},
        {0x20, "thermal slowdown (software)"},
        {0x40, "thermal slowdown (hardware)"},
        {0x80, "power brake"},
        {0x100, "display clock setting"},
    };
    if (reasons < 0)
        return bench__msg(buf, len, "unknown"), buf;
    if (reasons == 0)
        return bench__msg(buf, len, "none"), buf;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(reasons & names[i].bit))
            continue;
        int w = snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? ", " : "",
                         names[i].name);
        if (w > 0)
            used += (size_t)w;
    }
    long long other = reasons & ~0x1ffLL;
    if (other)
        snprintf(buf + (used < len ? used : len), used < len ? len - used : 0, "%s0x%llx",
                 used ? ", " : "", (unsigned long long)other);
    return buf;
}
