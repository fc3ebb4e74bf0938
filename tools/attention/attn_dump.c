/* The raw matrices as float32 or CSV (layouts in `txlm attention --help`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "cli.h"

static const char *const matrix_names[5] = {"a", "b", "c", "d", "probs"};

int attn_dump_f32(const attn_run *r, const attn_slice *s, uint32_t n, int terms, void **data, size_t *size)
{
    size_t mat = (size_t)r->shape.qlen * r->shape.klen, per = terms ? 5 : 1;
    float *out = malloc(n * per * mat * sizeof *out);
    if (!out) return cli_error("out of memory for the float32 dump");
    float *p = out;
    for (uint32_t k = 0; k < n; k++)
        for (int t = terms ? 0 : 4; t < 5; t++, p += mat) memcpy(p, s[k].m[t], mat * sizeof *p);
    *data = out;
    *size = n * per * mat * sizeof *out;
    return 0;
}

int attn_dump_csv(const attn_run *r, const attn_slice *s, uint32_t n, int terms, void **data, size_t *size)
{
    const txlm_attention_shape *sh = &r->shape;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, size);
    if (!f) return cli_error("out of memory for the CSV dump");
    fprintf(f, "layer,head,matrix,query,key,query_pos,key_pos,distance,masked,value\n");
    uint32_t k0 = r->first_query - sh->mlen;
    for (uint32_t k = 0; k < n; k++) {
        char head[16];
        if (s[k].head == ATTN_MEAN)
            snprintf(head, sizeof head, "mean");
        else
            snprintf(head, sizeof head, "%d", s[k].head);
        for (int t = terms ? 0 : 4; t < 5; t++)
            for (uint32_t i = 0; i < sh->qlen; i++)
                for (uint32_t j = 0; j < sh->klen; j++) {
                    size_t e = (size_t)i * sh->klen + j;
                    fprintf(f, "%u,%s,%s,%u,%u,%u,%u,%lld,%d,%.9g\n", s[k].layer, head, matrix_names[t], i, j,
                            r->first_query + i, k0 + j, (long long)sh->mlen + i - j, r->masked[e],
                            (double)s[k].m[t][e]);
                }
    }
    if (ferror(f) | fclose(f)) {
        free(buf);
        return cli_error("out of memory for the CSV dump");
    }
    *data = buf;
    return 0;
}
