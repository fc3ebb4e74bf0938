/*
 * txlm_status: the status codes of every txlm function, in a header of
 * their own so that the file-format code (which txlm.h's handles do not
 * concern) can return them too. Included by txlm.h.
 */
#ifndef TXLM_STATUS_H
#define TXLM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports (everything else in it is hidden). */
#ifndef TXLM_API
#if defined(__GNUC__) && !defined(TXLM_STATIC)
#define TXLM_API __attribute__((visibility("default")))
#else
#define TXLM_API
#endif
#endif

typedef enum txlm_status {
    TXLM_OK = 0,
    TXLM_ERR_INVALID_ARGUMENT = 1,
    TXLM_ERR_IO = 2,            /* a file could not be read or written */
    TXLM_ERR_FORMAT = 3,        /* malformed input (model file, checkpoint, JSON, ...) */
    TXLM_ERR_CHECKSUM = 4,      /* stored data does not match its checksum */
    TXLM_ERR_UNSUPPORTED = 5,   /* well-formed but not something txlm runs */
    TXLM_ERR_NO_VULKAN = 6,     /* no Vulkan loader or no usable driver */
    TXLM_ERR_NO_DEVICE = 7,     /* no device matches the request */
    TXLM_ERR_OUT_OF_MEMORY = 8, /* host or device memory */
    TXLM_ERR_DEVICE_LOST = 9,
    TXLM_ERR_VULKAN = 10,       /* any other Vulkan failure */
    TXLM_ERR_CANCELLED = 11,
    TXLM_ERR_LIMIT = 12,        /* a size exceeds a configured cap */
    TXLM_ERR_NONFINITE = 13,    /* a log-probability came out NaN or infinite (weights with NaN, infinity or huge values) */
} txlm_status;

#ifdef __cplusplus
}
#endif

#endif
