/*
 * nvml.h: the GPU's state while it runs, through NVML (the driver's libnvidia-ml), loaded at run
 * time with dlopen, so that no build needs NVML and a machine without the driver runs as before:
 * opening then fails with the reason ("unavailable"), and the CUDA layer records no GPU state.
 *
 * The CUDA probe (cuda.c) reads the state after its timed blocks (SM and memory clocks,
 * temperature, power, clock event reasons) and the default clocks once; the manager locks the SM
 * clock for --gpu-lock-clocks. Every query that the driver does not support on a GPU comes back
 * as -1 ("unknown"), never as an error.
 *
 * Test hook: BENCH_NVML_LIBRARY names the library to load in place of libnvidia-ml.so.1
 * (tests/unit/fake_nvml.c builds one that exports the same nvml* symbols with scripted values).
 */
#ifndef HARNESS_NVML_H
#define HARNESS_NVML_H

#include <stdbool.h>
#include <stddef.h>

/** An open NVML and the device it watches. */
typedef struct bench__nvml bench__nvml;

/** The device's state at one moment; -1 where unknown (not supported, or the query failed). */
typedef struct bench__gpu_state {
    double sm_clock_mhz;  /* current SM clock, MHz */
    double mem_clock_mhz; /* current memory clock, MHz */
    double temperature_c; /* GPU core temperature, degrees C */
    double power_w;       /* board power draw, W (the driver's own averaged reading) */
    long long reasons;    /* clock event ("throttle") reasons, NVML's bits; -1 unknown */
} bench__gpu_state;

/** The device's reference clocks; -1 where unknown. */
typedef struct bench__gpu_clocks {
    double sm_default_mhz; /* default applications SM clock, MHz */
    double sm_max_mhz;     /* highest SM clock, MHz */
    double mem_max_mhz;    /* highest memory clock, MHz */
} bench__gpu_clocks;

/*
 * NVML's clock event reasons that slow the GPU down (power cap, hardware slowdown, thermal
 * slowdowns, power brake). Not among them: idle, application clock setting, sync boost,
 * display clock setting.
 */
#define BENCH__NVML_SLOWDOWN_REASONS 0xECLL

/** The library loaded: $BENCH_NVML_LIBRARY if set and not empty, else "libnvidia-ml.so.1". */
const char *bench__nvml_library(void);

/**
 * Loads NVML, initialises it and finds the device with this PCI bus id ("0000:19:00.0"; NULL or
 * "" for index 0). Returns 0 and *out (caller owns: bench__nvml_close); or BENCH_EUNAVAIL with
 * the reason in msg ("libnvidia-ml.so.1 could not be loaded (...)", "nvmlInit: Driver Not
 * Loaded", ...), *out NULL.
 */
int bench__nvml_open(bench__nvml **out, const char *pci_bus_id, char *msg, size_t msglen);
/** Shuts NVML down and unloads it; NULL: no-op. */
void bench__nvml_close(bench__nvml *n);
/** The device's state now; each field -1 where unknown. Costs a few NVML calls (ioctls). */
void bench__nvml_read(bench__nvml *n, bench__gpu_state *st);
/** The device's reference clocks; each field -1 where unknown. */
void bench__nvml_clocks(bench__nvml *n, bench__gpu_clocks *c);
/**
 * Locks the SM clock to mhz (nvmlDeviceSetGpuLockedClocks with mhz as both bounds). 0, or
 * BENCH_EUNAVAIL with NVML's reason in msg (no permission: root is needed; not supported).
 */
int bench__nvml_lock_sm_clock(bench__nvml *n, unsigned mhz, char *msg, size_t msglen);
/** Undoes a lock (nvmlDeviceResetGpuLockedClocks). 0, or BENCH_EUNAVAIL with the reason. */
int bench__nvml_unlock_sm_clock(bench__nvml *n, char *msg, size_t msglen);
/** The reasons' names, comma-separated ("power cap, thermal slowdown (software)"); "none" for 0,
 * "unknown" for -1. Returns buf. */
const char *bench__nvml_reasons_text(long long reasons, char *buf, size_t len);

#endif /* HARNESS_NVML_H */
