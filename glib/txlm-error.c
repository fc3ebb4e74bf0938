/* TXLM_ERROR: txlm's status codes as a GError domain, one to one. */
#include "txlm-glib-private.h"

/**
 * txlm_error_quark:
 *
 * The quark of the %TXLM_ERROR domain, whose name is "txlm-error-quark".
 *
 * Returns: the error domain
 */
G_DEFINE_QUARK(txlm-error-quark, txlm_error)

G_DEFINE_ENUM_TYPE(TxlmError, txlm_error,
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_INVALID_ARGUMENT, "invalid-argument"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_IO, "io"), G_DEFINE_ENUM_VALUE(TXLM_ERROR_FORMAT, "format"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_CHECKSUM, "checksum"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_UNSUPPORTED, "unsupported"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_NO_VULKAN, "no-vulkan"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_NO_DEVICE, "no-device"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_OUT_OF_MEMORY, "out-of-memory"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_DEVICE_LOST, "device-lost"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_VULKAN, "vulkan"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_CANCELLED, "cancelled"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_LIMIT, "limit"),
                   G_DEFINE_ENUM_VALUE(TXLM_ERROR_NONFINITE, "nonfinite"))

/* the codes are txlm's status codes, value for value */
#define SAME(code, status) G_STATIC_ASSERT((int)TXLM_ERROR_##code == (int)TXLM_ERR_##status)
SAME(INVALID_ARGUMENT, INVALID_ARGUMENT);
SAME(IO, IO);
SAME(FORMAT, FORMAT);
SAME(CHECKSUM, CHECKSUM);
SAME(UNSUPPORTED, UNSUPPORTED);
SAME(NO_VULKAN, NO_VULKAN);
SAME(NO_DEVICE, NO_DEVICE);
SAME(OUT_OF_MEMORY, OUT_OF_MEMORY);
SAME(DEVICE_LOST, DEVICE_LOST);
SAME(VULKAN, VULKAN);
SAME(CANCELLED, CANCELLED);
SAME(LIMIT, LIMIT);
SAME(NONFINITE, NONFINITE);

GError *txlm_glib_error_new(txlm_status status)
{
    const char *why = txlm_last_error();
    if (!why || !*why) why = txlm_status_string(status);
    if (status == TXLM_ERR_CANCELLED) return g_error_new_literal(G_IO_ERROR, G_IO_ERROR_CANCELLED, why);
    return g_error_new_literal(TXLM_ERROR, (int)status, why);
}

void txlm_glib_set_error(GError **error, txlm_status status)
{
    if (error) *error = txlm_glib_error_new(status);
}
