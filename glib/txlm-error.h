#ifndef TXLM_ERROR_H
#define TXLM_ERROR_H

#include <glib-object.h>

#include "txlm-glib-macros.h"

G_BEGIN_DECLS

/**
 * TXLM_ERROR:
 *
 * The error domain of txlm-glib: the #GError domain whose codes are
 * #TxlmError, txlm's status codes one to one. Cancelling is reported as
 * %G_IO_ERROR_CANCELLED in the %G_IO_ERROR domain, as GIO reports it;
 * a session busy with another call as %G_IO_ERROR_BUSY.
 */
#define TXLM_ERROR (txlm_error_quark())

/**
 * TxlmError:
 * @TXLM_ERROR_INVALID_ARGUMENT: a value out of range, a token outside the
 *   vocabulary, a state saved by another model, text that is not UTF-8
 *   where UTF-8 is needed, a model not loaded
 * @TXLM_ERROR_IO: a file could not be read or written (a model file that
 *   does not exist, a state file)
 * @TXLM_ERROR_FORMAT: malformed input: a model file, a session state
 * @TXLM_ERROR_CHECKSUM: stored data does not match its checksum (a
 *   damaged model file or state)
 * @TXLM_ERROR_UNSUPPORTED: well-formed but not something txlm runs (a
 *   newer format version)
 * @TXLM_ERROR_NO_VULKAN: no Vulkan loader or driver
 * @TXLM_ERROR_NO_DEVICE: no device matches the request
 * @TXLM_ERROR_OUT_OF_MEMORY: host or device memory
 * @TXLM_ERROR_DEVICE_LOST: the device was lost
 * @TXLM_ERROR_VULKAN: another Vulkan failure
 * @TXLM_ERROR_CANCELLED: txlm's own status for a cancelled call; txlm-glib
 *   reports cancelling as %G_IO_ERROR_CANCELLED instead, and this code is
 *   here so that the codes map txlm's status codes one to one
 * @TXLM_ERROR_LIMIT: a size exceeds a configured cap
 * @TXLM_ERROR_NONFINITE: a log-probability came out NaN or infinite (the
 *   model's weights hold non-finite or huge values)
 *
 * The codes of the %TXLM_ERROR domain. Each has the value of the
 * txlm_status of the C API (include/txlm_status.h) it stands for, and the
 * message is the C API's one-line reason (txlm_last_error()).
 */
typedef enum {
    TXLM_ERROR_INVALID_ARGUMENT = 1,
    TXLM_ERROR_IO = 2,
    TXLM_ERROR_FORMAT = 3,
    TXLM_ERROR_CHECKSUM = 4,
    TXLM_ERROR_UNSUPPORTED = 5,
    TXLM_ERROR_NO_VULKAN = 6,
    TXLM_ERROR_NO_DEVICE = 7,
    TXLM_ERROR_OUT_OF_MEMORY = 8,
    TXLM_ERROR_DEVICE_LOST = 9,
    TXLM_ERROR_VULKAN = 10,
    TXLM_ERROR_CANCELLED = 11,
    TXLM_ERROR_LIMIT = 12,
    TXLM_ERROR_NONFINITE = 13,
} TxlmError;

#define TXLM_TYPE_ERROR (txlm_error_get_type())

TXLM_GLIB_API GQuark txlm_error_quark(void);
TXLM_GLIB_API GType txlm_error_get_type(void);

G_END_DECLS

#endif
