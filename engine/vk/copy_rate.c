/* The device's buffer-to-buffer copy rate: the yardstick for kernels
 * whose work is streaming weights (one-token steps), measured the same
 * way on every device. */
#include "copy_rate.h"

#include <stdlib.h>
#include <time.h>

#include "recorder.h"

enum { COPIES = 4, TIMINGS = 5 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* COPIES copies of x into y per submission, so that a fast device's copy
 * outweighs the submission's own cost; the first submission, which also
 * commits the buffers' pages, is not timed. Always x into y: copying back
 * what the copy before wrote measured 12.9 GB/s against 18.8 on lavapipe,
 * and a one-token step reads weights nothing has just written. */
static int time_copies(txlm_rec *rec, const txlm_buf *x, const txlm_buf *y, VkDeviceSize bytes, double *rate,
                       txlm_err *err)
{
    double t[TIMINGS];
    for (int r = -1; r < TIMINGS; r++) {
        int rc = txlm_rec_begin(rec, err);
        for (int c = 0; c < COPIES && !rc; c++) {
            txlm_rec_copy(rec, x->buf, 0, y->buf, 0, bytes);
            txlm_rec_barrier(rec);
        }
        double t0 = now_s();
        if (!rc) rc = txlm_rec_submit(rec, err);
        if (rc) return rc;
        if (r >= 0) t[r] = (double)COPIES * (double)bytes / (now_s() - t0);
    }
    qsort(t, TIMINGS, sizeof *t, cmp_double);
    *rate = t[TIMINGS / 2];
    return 0;
}

int txlm_copy_rate(txlm_context *ctx, double *bytes_per_s, txlm_err *err)
{
    txlm_vk *vk = &ctx->vk;
    txlm_rec rec;
    int rc = txlm_rec_init(&rec, vk, &ctx->kernels, (txlm_view){0}, err); /* copies only */
    if (rc) return rc;
    /* 256 MiB where the device has room, less where it has not */
    VkDeviceSize bytes = (VkDeviceSize)256 << 20;
    txlm_buf x = {0}, y = {0};
    for (;; bytes /= 2) {
        txlm_err e = {0};
        if (!txlm_buf_create(vk, bytes, TXLM_BUF_DEVICE, &x, &e) && !txlm_buf_create(vk, bytes, TXLM_BUF_DEVICE, &y, &e))
            break;
        if (x.buf) txlm_buf_destroy(vk, &x);
        if (bytes <= (VkDeviceSize)4 << 20) {
            *err = e;
            txlm_rec_destroy(&rec);
            return txlm_fail_prefix(err, "measuring the copy rate: ");
        }
    }
    rc = time_copies(&rec, &x, &y, bytes, bytes_per_s, err);
    txlm_buf_destroy(vk, &x);
    txlm_buf_destroy(vk, &y);
    txlm_rec_destroy(&rec);
    return rc;
}
