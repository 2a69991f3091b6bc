/*
 * Messages for the library's error codes, generated from the same X-macro table as the enum so
 * that every code has exactly one message.
 */
#include "workloads/wl_error.h"

const char *wl_strerror(int code)
{
    switch (code) {
#define WL_ERROR_CASE_(name, value, msg) \
    case (value):                        \
        return (msg);
        WL_ERROR_TABLE(WL_ERROR_CASE_)
#undef WL_ERROR_CASE_
    default:
        return "unknown error";
    }
}
