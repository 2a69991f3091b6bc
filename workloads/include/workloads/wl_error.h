/*
 * Error codes of the workload library. Every fallible wl_* function returns 0 on success or one of
 * the negative codes below; the codes and their messages come from the single X-macro table
 * WL_ERROR_TABLE, so the enum and wl_strerror() can never drift apart.
 */
#ifndef WORKLOADS_WL_ERROR_H
#define WORKLOADS_WL_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message): one row per error code. */
#define WL_ERROR_TABLE(X)                                                               \
    X(WL_OK, 0, "success")                                                              \
    X(WL_E_INVAL, -1, "invalid argument")                                               \
    X(WL_E_OVERFLOW, -2, "size too large (overflows the index or byte-count type)")     \
    X(WL_E_NOMEM, -3, "out of memory")                                                  \
    X(WL_E_UNAVAILABLE, -4, "capability unavailable on this CPU or build")

/** Error codes returned (negated where nonzero) by fallible wl_* functions. */
typedef enum wl_error {
#define WL_ERROR_ENUM_(name, value, msg) name = (value),
    WL_ERROR_TABLE(WL_ERROR_ENUM_)
#undef WL_ERROR_ENUM_
} wl_error;

/**
 * Returns a static, human-readable message for an error code (never NULL; unknown codes give
 * "unknown error"). The string is owned by the library and must not be freed.
 */
const char *wl_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOADS_WL_ERROR_H */
