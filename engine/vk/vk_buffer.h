/* Device buffers: allocation (with the context's memory budget), host
 * mapping where the memory allows it, uploads and downloads. */
#ifndef TXLM_VK_BUFFER_H
#define TXLM_VK_BUFFER_H

#include "vk_context.h"

typedef enum txlm_buf_kind {
    TXLM_BUF_DEVICE,   /* device-local; mapped too when the device offers such memory (UMA, ReBAR, lavapipe) */
    TXLM_BUF_READBACK, /* host-visible, cached if possible: GPU writes results the host reads */
    TXLM_BUF_STAGING,  /* host-visible, for uploads */
} txlm_buf_kind;

typedef struct txlm_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;         /* non-NULL when host-visible */
    int coherent;
    VkDeviceSize charged; /* bytes counted against the context's memory budget */
} txlm_buf;

int txlm_buf_create(txlm_vk *vk, VkDeviceSize size, txlm_buf_kind kind, txlm_buf *out, txlm_err *err);
/* Bytes of the device's heaps: the device-local ones where there are any
 * (a GPU's own memory), else all of them (a CPU device's). */
uint64_t txlm_vk_heap_bytes(const txlm_vk *vk);
void txlm_buf_destroy(txlm_vk *vk, txlm_buf *b);
/* Copies host bytes into the buffer: memcpy when mapped, otherwise
 * through a staging buffer and a one-off transfer. */
int txlm_buf_upload(txlm_vk *vk, txlm_buf *dst, VkDeviceSize off, const void *src, VkDeviceSize n, txlm_err *err);
/* Copies buffer bytes to the host (mapped, or through a staging buffer). */
int txlm_buf_download(txlm_vk *vk, txlm_buf *src, VkDeviceSize off, void *dst, VkDeviceSize n, txlm_err *err);
/* Makes host writes to a mapped buffer visible to the device (non-coherent memory). */
int txlm_buf_flush(txlm_vk *vk, txlm_buf *b, txlm_err *err);
/* Makes GPU writes to a mapped buffer visible to the host (non-coherent memory). */
int txlm_buf_invalidate(txlm_vk *vk, txlm_buf *b, txlm_err *err);

#endif
