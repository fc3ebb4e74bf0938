#include "rec_profile.h"

#include <stdio.h>
#include <stdlib.h>

enum { CAP = 4096 }; /* timestamps a recording keeps; commands past it go uncounted */

struct txlm_rec_profile {
    txlm_vk *vk;
    VkQueryPool pool;
    uint32_t n;                       /* timestamps written in this recording */
    uint32_t who[CAP];                /* the command each one ends */
    uint64_t t[CAP];
    double ms[TXLM_K_COUNT + 1];      /* totals since create */
    uint64_t calls[TXLM_K_COUNT + 1];
    uint64_t submits;
    uint64_t mask; /* the queue's valid timestamp bits: differences wrap there */
};

txlm_rec_profile *txlm_rec_profile_create(txlm_vk *vk)
{
    if (!vk->env.profile || vk->timestamp_bits == 0) return NULL;
    txlm_rec_profile *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->vk = vk;
    uint32_t bits = vk->timestamp_bits;
    p->mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = CAP};
    if (vkCreateQueryPool(vk->device, &qi, NULL, &p->pool) != VK_SUCCESS) {
        free(p);
        return NULL;
    }
    return p;
}

void txlm_rec_profile_begin(txlm_rec_profile *p, VkCommandBuffer cmd)
{
    if (!p) return;
    vkCmdResetQueryPool(cmd, p->pool, 0, CAP);
    p->n = 0;
    txlm_rec_profile_mark(p, cmd, TXLM_K_COUNT);
}

void txlm_rec_profile_mark(txlm_rec_profile *p, VkCommandBuffer cmd, uint32_t kernel_or_count)
{
    if (!p || p->n >= CAP) return;
    p->who[p->n] = kernel_or_count;
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->pool, p->n++);
}

void txlm_rec_profile_collect(txlm_rec_profile *p)
{
    if (!p || p->n < 2) return;
    uint64_t *t = p->t;
    if (vkGetQueryPoolResults(p->vk->device, p->pool, 0, p->n, sizeof p->t, t, sizeof *t,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
        return;
    double period_ms = p->vk->props.limits.timestampPeriod * 1e-6;
    for (uint32_t i = 1; i < p->n; i++) {
        p->ms[p->who[i]] += (double)((t[i] - t[i - 1]) & p->mask) * period_ms;
        p->calls[p->who[i]]++;
    }
    p->submits++;
}

void txlm_rec_profile_destroy(txlm_rec_profile *p, const txlm_kernels *ks)
{
    if (!p) return;
    double total = 0;
    for (uint32_t k = 0; k <= TXLM_K_COUNT; k++) total += p->ms[k];
    if (total > 0) {
        fprintf(stderr, "device time by kernel, %llu submissions:\n%-28s %9s %11s %11s %7s\n",
                (unsigned long long)p->submits, "kernel", "calls", "total ms", "ms a call", "share");
        for (;;) { /* largest first */
            uint32_t best = TXLM_K_COUNT + 1;
            for (uint32_t k = 0; k <= TXLM_K_COUNT; k++)
                if (p->calls[k] && (best > TXLM_K_COUNT || p->ms[k] > p->ms[best])) best = k;
            if (best > TXLM_K_COUNT) break;
            fprintf(stderr, "%-28s %9llu %11.2f %11.4f %6.1f%%\n", best < TXLM_K_COUNT ? ks->k[best].name : "copies and fills",
                    (unsigned long long)p->calls[best], p->ms[best], p->ms[best] / (double)p->calls[best],
                    100 * p->ms[best] / total);
            p->calls[best] = 0;
        }
    }
    vkDestroyQueryPool(p->vk->device, p->pool, NULL);
    free(p);
}
