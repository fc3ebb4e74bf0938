#ifndef TXLM_DEVICE_H
#define TXLM_DEVICE_H

#include <gio/gio.h>

#include "txlm-glib-macros.h"

G_BEGIN_DECLS

/**
 * TxlmDeviceType:
 * @TXLM_DEVICE_TYPE_OTHER: none of the others
 * @TXLM_DEVICE_TYPE_INTEGRATED: a GPU sharing the machine's memory
 * @TXLM_DEVICE_TYPE_DISCRETE: a GPU with memory of its own
 * @TXLM_DEVICE_TYPE_VIRTUAL: a GPU of a virtual machine
 * @TXLM_DEVICE_TYPE_CPU: the CPU itself (Mesa's lavapipe)
 *
 * What kind of Vulkan device a #TxlmDevice is.
 */
typedef enum {
    TXLM_DEVICE_TYPE_OTHER = 0,
    TXLM_DEVICE_TYPE_INTEGRATED = 1,
    TXLM_DEVICE_TYPE_DISCRETE = 2,
    TXLM_DEVICE_TYPE_VIRTUAL = 3,
    TXLM_DEVICE_TYPE_CPU = 4,
} TxlmDeviceType;

#define TXLM_TYPE_DEVICE_TYPE (txlm_device_type_get_type())
TXLM_GLIB_API GType txlm_device_type_get_type(void);

#define TXLM_TYPE_DEVICE (txlm_device_get_type())
TXLM_GLIB_API G_DECLARE_FINAL_TYPE(TxlmDevice, txlm_device, TXLM, DEVICE, GObject)

TXLM_GLIB_API GListModel *txlm_device_list(GError **error);
TXLM_GLIB_API void txlm_device_list_async(GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
TXLM_GLIB_API GListModel *txlm_device_list_finish(GAsyncResult *result, GError **error);

TXLM_GLIB_API guint txlm_device_get_index(TxlmDevice *device);
TXLM_GLIB_API const char *txlm_device_get_name(TxlmDevice *device);
TXLM_GLIB_API TxlmDeviceType txlm_device_get_device_type(TxlmDevice *device);
TXLM_GLIB_API guint txlm_device_get_vendor_id(TxlmDevice *device);
TXLM_GLIB_API guint txlm_device_get_device_id(TxlmDevice *device);
TXLM_GLIB_API const char *txlm_device_get_api_version(TxlmDevice *device);
TXLM_GLIB_API guint64 txlm_device_get_memory_bytes(TxlmDevice *device);
TXLM_GLIB_API guint txlm_device_get_subgroup_size(TxlmDevice *device);
TXLM_GLIB_API gboolean txlm_device_get_supported(TxlmDevice *device);
TXLM_GLIB_API gboolean txlm_device_get_preferred(TxlmDevice *device);

G_END_DECLS

#endif
