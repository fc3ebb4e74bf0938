/* A txlm_vk on the program's own device (vk_context.h, txlm_vulkan.h):
 * its handles checked and taken as they are, what its create info
 * enabled read for detection, nothing of Vulkan's created but the
 * validation messenger where asked for. */
#include "vk_context.h"

#include <stdio.h>
#include <string.h>

#include "device_features.h"
#include "txlm_vulkan.h"

static const char *version_text(uint32_t v, char *buf, size_t n)
{
    snprintf(buf, n, "%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v));
    return buf;
}

/* The handles are there, the versions and the queue family do. */
static int check_device(txlm_vk *vk, const txlm_host_device *dev, txlm_err *err)
{
    char a[16], b[16];
    if (!dev->instance || !dev->physical_device || !dev->device || !dev->queue || !dev->create_info)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                         "txlm_context_create_on_device: instance, physical_device, device, queue and create_info are required");
    if (!dev->lock_queue != !dev->unlock_queue)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                         "txlm_context_create_on_device: give both lock_queue and unlock_queue, or neither");
    if (dev->api_version < TXLM_VK_API)
        return txlm_fail(err, TXLM_ERR_NO_DEVICE, "the instance's Vulkan version %s is below %s, which txlm needs "
                         "(VkApplicationInfo.apiVersion; txlm_host_device.api_version)",
                         version_text(dev->api_version, a, sizeof a), version_text(TXLM_VK_API, b, sizeof b));
    if (vk->props.apiVersion < TXLM_VK_API)
        return txlm_fail(err, TXLM_ERR_NO_DEVICE, "the device %s has Vulkan %s; txlm needs %s", vk->props.deviceName,
                         version_text(vk->props.apiVersion, a, sizeof a), version_text(TXLM_VK_API, b, sizeof b));
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, NULL);
    VkQueueFamilyProperties q[64];
    if (n > 64) n = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &n, q);
    if (dev->queue_family >= n || !(q[dev->queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
        return txlm_fail(err, TXLM_ERR_NO_DEVICE, "queue family %u of %s %s", dev->queue_family, vk->props.deviceName,
                         dev->queue_family >= n ? "does not exist" : "has no compute (VK_QUEUE_COMPUTE_BIT)");
    vk->timestamp_bits = q[dev->queue_family].timestampValidBits;
    return 0;
}

/* A required need the device offers and the program did not enable. */
static int check_required(const txlm_vk *vk, uint32_t api, txlm_err *err)
{
    txlm_vk_enabled offered;
    txlm_vk_features_offered(vk->phys, api, &offered);
    uint32_t n;
    const txlm_vk_need_row *rows = txlm_vk_need_rows(&n);
    for (uint32_t i = 0; i < n; i++)
        if (rows[i].required && txlm_vk_need_set(&offered, &rows[i]) && !txlm_vk_need_set(&vk->enabled, &rows[i]))
            return txlm_fail(err, TXLM_ERR_NO_DEVICE, "the device was created without %s, which txlm requires (%s)",
                             rows[i].name, rows[i].use);
    return 0;
}

int txlm_vk_open_host(txlm_vk *vk, const txlm_host_device *dev, const txlm_context_options *opts, txlm_err *err)
{
    memset(vk, 0, sizeof *vk);
    txlm_env_read(&vk->env);
    if (!(vk->debug = txlm_debug_create(&vk->env))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    pthread_mutex_init(&vk->queue_lock, NULL);
    vk->host = 1;
    int rc = opts && opts->device ? txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                                              "txlm_context_create_on_device: options.device must be NULL (the device is the program's)")
                                  : txlm_vk_load(dev->get_instance_proc_addr, err);
    if (rc) return txlm_vk_close(vk), rc;
    txlm_vk_load_instance(dev->instance);
    vk->instance = dev->instance;
    vk->phys = dev->physical_device;
    vkGetPhysicalDeviceProperties(vk->phys, &vk->props);
    rc = check_device(vk, dev, err);
    uint32_t api = dev->api_version < vk->props.apiVersion ? dev->api_version : vk->props.apiVersion;
    if (!rc) {
        txlm_vk_features_enabled(dev->create_info, api, &vk->enabled);
        rc = check_required(vk, api, err);
    }
    if (!rc) {
        vk->device = dev->device;
        vk->queue = dev->queue;
        vk->queue_family = dev->queue_family;
        vk->shared = (txlm_vk_queue_lock){dev->lock_queue, dev->unlock_queue, dev->queue_user};
        /* the validation layer is the program's to enable (TXLM_VALIDATION
         * does not apply); txlm counts its messages where asked */
        vk->validation = opts && opts->validation;
        if (vk->validation) rc = txlm_vk_add_messenger(vk, err);
    }
    if (!rc) {
        txlm_vk_read_device(vk, opts);
        /* the program made the device: shaders on a CPU device run in the FP
         * environment of the thread that did (fp_flush.h) */
        vk->flush_subnormals = 0;
    }
    if (rc) txlm_vk_close(vk);
    return rc;
}
