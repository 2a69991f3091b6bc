/*
 * fake_nvml.c: a stand-in for the driver's libnvidia-ml.so.1, built as a shared library for the
 * tests (BENCH_NVML_LIBRARY names it; harness/src/probes/nvml.h). It exports the nvml* functions that
 * harness/src/probes/nvml.c looks up, with NVML's ABI, and answers with values scripted by environment
 * variables read at nvmlInit_v2:
 *
 *   FAKE_NVML_INIT=fail          nvmlInit_v2 fails ("Driver Not Loaded")
 *   FAKE_NVML_NO_DEVICE=1        no device has the asked PCI bus id ("Not Found")
 *   FAKE_NVML_SM_MHZ=a,b,...     SM clocks, one per query, in turn (then again from the start)
 *   FAKE_NVML_MEM_MHZ, FAKE_NVML_TEMP_C, FAKE_NVML_POWER_MW, FAKE_NVML_REASONS: likewise
 *   FAKE_NVML_DEFAULT_SM_MHZ     the default applications SM clock; "none": not supported
 *   FAKE_NVML_LOCK=denied        locking clocks fails ("Insufficient Permissions")
 *   FAKE_NVML_LOG=PATH           appends "init", "device BUSID", "lock MIN MAX", "reset",
 *                                "shutdown" lines there
 *
 * A value list is at most 64 numbers. Nothing here knows about GPUs; it only lets the tests
 * check what the harness does with NVML's answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, ERR_NOT_SUPPORTED = 3, ERR_NO_PERMISSION = 4, ERR_NOT_FOUND = 6,
       ERR_DRIVER_NOT_LOADED = 9 };

typedef struct series {
    unsigned long long v[64];
    int n, next;
} series;

/* The exported functions, declared (the warnings ask every global function for a prototype). */
EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT const char *nvmlErrorString(int rc);
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev);
EXPORT int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz);
EXPORT int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz);
EXPORT int nvmlDeviceGetDefaultApplicationsClock(void *dev, int type, unsigned *mhz);
EXPORT int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c);
EXPORT int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw);
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r);
EXPORT int nvmlDeviceSetGpuLockedClocks(void *dev, unsigned lo, unsigned hi);
EXPORT int nvmlDeviceResetGpuLockedClocks(void *dev);

static series sm, mem, temp, power, reasons;
static int device_token; /* the one device's handle points here */

static void load(series *s, const char *env, const char *dflt)
{
    const char *p = getenv(env);
    if (!p || !*p)
        p = dflt;
    s->n = s->next = 0;
    while (*p && s->n < 64) {
        char *end;
        unsigned long long v = strtoull(p, &end, 0);
        if (end == p)
            break;
        s->v[s->n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    if (s->n == 0)
        s->v[s->n++] = 0;
}

static unsigned long long take(series *s)
{
    unsigned long long v = s->v[s->next];
    s->next = (s->next + 1) % s->n;
    return v;
}

static void log_line(const char *line)
{
    const char *path = getenv("FAKE_NVML_LOG");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "%s\n", line);
    fclose(f);
}

static int flag(const char *env, const char *value)
{
    const char *p = getenv(env);
    return p && strcmp(p, value) == 0;
}

EXPORT int nvmlInit_v2(void)
{
    if (flag("FAKE_NVML_INIT", "fail"))
        return ERR_DRIVER_NOT_LOADED;
    load(&sm, "FAKE_NVML_SM_MHZ", "1980");
    load(&mem, "FAKE_NVML_MEM_MHZ", "2619");
    load(&temp, "FAKE_NVML_TEMP_C", "45");
    load(&power, "FAKE_NVML_POWER_MW", "300000");
    load(&reasons, "FAKE_NVML_REASONS", "0");
    log_line("init");
    return OK;
}

EXPORT int nvmlShutdown(void)
{
    log_line("shutdown");
    return OK;
}

EXPORT const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case OK:
        return "Success";
    case ERR_NOT_SUPPORTED:
        return "Not Supported";
    case ERR_NO_PERMISSION:
        return "Insufficient Permissions";
    case ERR_NOT_FOUND:
        return "Not Found";
    case ERR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    default:
        return "Unknown Error";
    }
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    char line[128];
    snprintf(line, sizeof line, "device %s", bus);
    log_line(line);
    if (flag("FAKE_NVML_NO_DEVICE", "1"))
        return ERR_NOT_FOUND;
    *dev = &device_token;
    return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
    char line[64];
    snprintf(line, sizeof line, "device index %u", i);
    log_line(line);
    if (flag("FAKE_NVML_NO_DEVICE", "1") || i != 0)
        return ERR_NOT_FOUND;
    *dev = &device_token;
    return OK;
}

/* nvmlClockType_t: 1 SM, 2 memory. */
EXPORT int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
    if (dev != &device_token)
        return ERR_NOT_FOUND;
    *mhz = (unsigned)(type == 1 ? take(&sm) : type == 2 ? take(&mem) : 0);
    return OK;
}

EXPORT int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    *mhz = type == 1 ? 1980 : 2619;
    return OK;
}

EXPORT int nvmlDeviceGetDefaultApplicationsClock(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    const char *p = getenv("FAKE_NVML_DEFAULT_SM_MHZ");
    if (type == 1 && p && strcmp(p, "none") == 0)
        return ERR_NOT_SUPPORTED;
    *mhz = type == 1 ? (p && *p ? (unsigned)strtoul(p, NULL, 10) : 1980) : 2619;
    return OK;
}

EXPORT int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c)
{
    (void)dev;
    if (sensor != 0)
        return ERR_NOT_SUPPORTED;
    *c = (unsigned)take(&temp);
    return OK;
}

EXPORT int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw)
{
    (void)dev;
    *mw = (unsigned)take(&power);
    return OK;
}

EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r)
{
    (void)dev;
    *r = take(&reasons);
    return OK;
}

EXPORT int nvmlDeviceSetGpuLockedClocks(void *dev, unsigned lo, unsigned hi)
{
    (void)dev;
    char line[64];
    snprintf(line, sizeof line, "lock %u %u", lo, hi);
    log_line(line);
    return flag("FAKE_NVML_LOCK", "denied") ? ERR_NO_PERMISSION : OK;
}

EXPORT int nvmlDeviceResetGpuLockedClocks(void *dev)
{
    (void)dev;
    log_line("reset");
    return flag("FAKE_NVML_LOCK", "denied") ? ERR_NO_PERMISSION : OK;
}
