/* TxlmDevice: one Vulkan device of txlm_list_devices, as an object with
 * read-only properties (a GListModel of them feeds a device picker). */
#include "txlm-glib-private.h"

/**
 * TxlmDevice:
 *
 * A Vulkan device txlm can run on, as txlm_device_list() lists them. Give
 * one to a #TxlmModel (its #TxlmModel:device property) to load the model
 * there; a loaded model's device tells where it runs. Its properties are
 * read-only and never change.
 */
struct _TxlmDevice {
    GObject parent;
    guint index;
    char *name;
    TxlmDeviceType type;
    guint vendor_id, device_id, subgroup_size;
    char *api_version;
    guint64 memory_bytes;
    gboolean supported, preferred;
};

G_DEFINE_TYPE(TxlmDevice, txlm_device, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE(TxlmDeviceType, txlm_device_type, G_DEFINE_ENUM_VALUE(TXLM_DEVICE_TYPE_OTHER, "other"),
                   G_DEFINE_ENUM_VALUE(TXLM_DEVICE_TYPE_INTEGRATED, "integrated"),
                   G_DEFINE_ENUM_VALUE(TXLM_DEVICE_TYPE_DISCRETE, "discrete"),
                   G_DEFINE_ENUM_VALUE(TXLM_DEVICE_TYPE_VIRTUAL, "virtual"),
                   G_DEFINE_ENUM_VALUE(TXLM_DEVICE_TYPE_CPU, "cpu"))

#define SAME(type, c_type) G_STATIC_ASSERT((int)TXLM_DEVICE_TYPE_##type == (int)TXLM_DEVICE_##c_type)
SAME(OTHER, OTHER);
SAME(INTEGRATED, INTEGRATED);
SAME(DISCRETE, DISCRETE);
SAME(VIRTUAL, VIRTUAL);
SAME(CPU, CPU);

enum {
    PROP_0,
    PROP_INDEX,
    PROP_NAME,
    PROP_DEVICE_TYPE,
    PROP_VENDOR_ID,
    PROP_DEVICE_ID,
    PROP_API_VERSION,
    PROP_MEMORY_BYTES,
    PROP_SUBGROUP_SIZE,
    PROP_SUPPORTED,
    PROP_PREFERRED,
    N_PROPS
};
static GParamSpec *props[N_PROPS];

static void txlm_device_finalize(GObject *object)
{
    TxlmDevice *d = TXLM_DEVICE(object);
    g_free(d->name);
    g_free(d->api_version);
    G_OBJECT_CLASS(txlm_device_parent_class)->finalize(object);
}

static void txlm_device_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TxlmDevice *d = TXLM_DEVICE(object);
    switch (id) {
    case PROP_INDEX: g_value_set_uint(value, d->index); break;
    case PROP_NAME: g_value_set_string(value, d->name); break;
    case PROP_DEVICE_TYPE: g_value_set_enum(value, d->type); break;
    case PROP_VENDOR_ID: g_value_set_uint(value, d->vendor_id); break;
    case PROP_DEVICE_ID: g_value_set_uint(value, d->device_id); break;
    case PROP_API_VERSION: g_value_set_string(value, d->api_version); break;
    case PROP_MEMORY_BYTES: g_value_set_uint64(value, d->memory_bytes); break;
    case PROP_SUBGROUP_SIZE: g_value_set_uint(value, d->subgroup_size); break;
    case PROP_SUPPORTED: g_value_set_boolean(value, d->supported); break;
    case PROP_PREFERRED: g_value_set_boolean(value, d->preferred); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

#define RO (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)

static void txlm_device_class_init(TxlmDeviceClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->finalize = txlm_device_finalize;
    oc->get_property = txlm_device_get_property;
    /**
     * TxlmDevice:index:
     *
     * The device's place in txlm_device_list()'s list, from 0 (what
     * `txlm devices` shows and `TXLM_DEVICE` takes).
     */
    props[PROP_INDEX] = g_param_spec_uint("index", NULL, NULL, 0, G_MAXUINT, 0, RO);
    /**
     * TxlmDevice:name:
     *
     * The device's name, as its driver gives it ("llvmpipe (LLVM 15.0.6, 256 bits)").
     */
    props[PROP_NAME] = g_param_spec_string("name", NULL, NULL, NULL, RO);
    /**
     * TxlmDevice:device-type:
     *
     * What kind of device it is.
     */
    props[PROP_DEVICE_TYPE] =
        g_param_spec_enum("device-type", NULL, NULL, TXLM_TYPE_DEVICE_TYPE, TXLM_DEVICE_TYPE_OTHER, RO);
    /**
     * TxlmDevice:vendor-id:
     *
     * The PCI vendor id (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel; lavapipe's is 0x10005).
     */
    props[PROP_VENDOR_ID] = g_param_spec_uint("vendor-id", NULL, NULL, 0, G_MAXUINT, 0, RO);
    /**
     * TxlmDevice:device-id:
     *
     * The vendor's id of the device.
     */
    props[PROP_DEVICE_ID] = g_param_spec_uint("device-id", NULL, NULL, 0, G_MAXUINT, 0, RO);
    /**
     * TxlmDevice:api-version:
     *
     * The Vulkan version the device supports, "MAJOR.MINOR.PATCH".
     */
    props[PROP_API_VERSION] = g_param_spec_string("api-version", NULL, NULL, NULL, RO);
    /**
     * TxlmDevice:memory-bytes:
     *
     * The size of the device's largest device-local memory heap, in bytes.
     */
    props[PROP_MEMORY_BYTES] = g_param_spec_uint64("memory-bytes", NULL, NULL, 0, G_MAXUINT64, 0, RO);
    /**
     * TxlmDevice:subgroup-size:
     *
     * The device's subgroup size (SIMD width).
     */
    props[PROP_SUBGROUP_SIZE] = g_param_spec_uint("subgroup-size", NULL, NULL, 0, G_MAXUINT, 0, RO);
    /**
     * TxlmDevice:supported:
     *
     * Whether the device meets txlm's requirements (Vulkan 1.2, a compute
     * queue): a model loads only on a supported device.
     */
    props[PROP_SUPPORTED] = g_param_spec_boolean("supported", NULL, NULL, FALSE, RO);
    /**
     * TxlmDevice:preferred:
     *
     * Whether this is the device a model loads on by default (discrete >
     * integrated > virtual > CPU), the `TXLM_DEVICE` environment variable
     * aside.
     */
    props[PROP_PREFERRED] = g_param_spec_boolean("preferred", NULL, NULL, FALSE, RO);
    g_object_class_install_properties(oc, N_PROPS, props);
}

static void txlm_device_init(TxlmDevice *d) { (void)d; }

TxlmDevice *txlm_glib_device_new(guint index, const txlm_device_info *info)
{
    TxlmDevice *d = g_object_new(TXLM_TYPE_DEVICE, NULL);
    d->index = index;
    d->name = g_strndup(info->name, sizeof info->name);
    d->type = (TxlmDeviceType)info->type;
    d->vendor_id = info->vendor_id;
    d->device_id = info->device_id;
    d->api_version = g_strdup_printf("%u.%u.%u", (info->api_version >> 22) & 0x7fu, (info->api_version >> 12) & 0x3ffu,
                                     info->api_version & 0xfffu);
    d->memory_bytes = info->device_local_bytes;
    d->subgroup_size = info->subgroup_size;
    d->supported = info->supported != 0;
    d->preferred = info->preferred != 0;
    return d;
}

/**
 * txlm_device_list:
 * @error: return location for a #GError, or %NULL
 *
 * Lists the Vulkan devices of this machine (a call of tens of
 * milliseconds: the Vulkan instance is created and destroyed;
 * txlm_device_list_async() does it on a worker thread).
 *
 * Returns: (transfer full): a #GListModel of #TxlmDevice, in txlm's
 *   order (a device's #TxlmDevice:index is its position), or %NULL with
 *   @error set (%TXLM_ERROR_NO_VULKAN without a Vulkan loader)
 */
GListModel *txlm_device_list(GError **error)
{
    uint32_t count = 0;
    txlm_status st = txlm_list_devices(NULL, 0, &count);
    txlm_device_info *info = st ? NULL : g_new0(txlm_device_info, count ? count : 1);
    if (!st) st = txlm_list_devices(info, count, &count);
    if (st) {
        g_free(info);
        txlm_glib_set_error(error, st);
        return NULL;
    }
    GListStore *store = g_list_store_new(TXLM_TYPE_DEVICE);
    for (uint32_t i = 0; i < count; i++) {
        TxlmDevice *d = txlm_glib_device_new(i, &info[i]);
        g_list_store_append(store, d);
        g_object_unref(d);
    }
    g_free(info);
    return G_LIST_MODEL(store);
}

static void list_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    (void)source, (void)data, (void)cancellable;
    GError *error = NULL;
    GListModel *list = txlm_device_list(&error);
    if (list) g_task_return_pointer(task, list, g_object_unref);
    else g_task_return_error(task, error);
}

/**
 * txlm_device_list_async:
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the list is ready
 * @user_data: (closure): data for @callback
 *
 * Lists the Vulkan devices on a worker thread, as txlm_device_list() does;
 * call txlm_device_list_finish() from @callback. Cancelling gives
 * %G_IO_ERROR_CANCELLED (the listing itself runs to its end).
 */
void txlm_device_list_async(GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
    GTask *task = g_task_new(NULL, cancellable, callback, user_data);
    g_task_set_source_tag(task, txlm_device_list_async);
    g_task_run_in_thread(task, list_in_thread);
    g_object_unref(task);
}

/**
 * txlm_device_list_finish:
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_device_list_async().
 *
 * Returns: (transfer full): a #GListModel of #TxlmDevice, or %NULL with
 *   @error set
 */
GListModel *txlm_device_list_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
    g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == txlm_device_list_async, NULL);
    return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * txlm_device_get_index:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:index property
 */
guint txlm_device_get_index(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), 0);
    return device->index;
}

/**
 * txlm_device_get_name:
 * @device: a #TxlmDevice
 *
 * Returns: (transfer none): the #TxlmDevice:name property
 */
const char *txlm_device_get_name(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), NULL);
    return device->name;
}

/**
 * txlm_device_get_device_type:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:device-type property
 */
TxlmDeviceType txlm_device_get_device_type(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), TXLM_DEVICE_TYPE_OTHER);
    return device->type;
}

/**
 * txlm_device_get_vendor_id:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:vendor-id property
 */
guint txlm_device_get_vendor_id(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), 0);
    return device->vendor_id;
}

/**
 * txlm_device_get_device_id:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:device-id property
 */
guint txlm_device_get_device_id(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), 0);
    return device->device_id;
}

/**
 * txlm_device_get_api_version:
 * @device: a #TxlmDevice
 *
 * Returns: (transfer none): the #TxlmDevice:api-version property
 */
const char *txlm_device_get_api_version(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), NULL);
    return device->api_version;
}

/**
 * txlm_device_get_memory_bytes:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:memory-bytes property
 */
guint64 txlm_device_get_memory_bytes(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), 0);
    return device->memory_bytes;
}

/**
 * txlm_device_get_subgroup_size:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:subgroup-size property
 */
guint txlm_device_get_subgroup_size(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), 0);
    return device->subgroup_size;
}

/**
 * txlm_device_get_supported:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:supported property
 */
gboolean txlm_device_get_supported(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), FALSE);
    return device->supported;
}

/**
 * txlm_device_get_preferred:
 * @device: a #TxlmDevice
 *
 * Returns: the #TxlmDevice:preferred property
 */
gboolean txlm_device_get_preferred(TxlmDevice *device)
{
    g_return_val_if_fail(TXLM_IS_DEVICE(device), FALSE);
    return device->preferred;
}
