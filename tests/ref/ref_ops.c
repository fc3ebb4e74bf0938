/* Straightforward loops on purpose: this file is the yardstick the GPU
 * kernels are measured against, so it favours obviousness over speed
 * (apart from keeping the inner loops contiguous). */
#include "ref_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ref_linear(const float *x, const float *w, const float *b, uint32_t M, uint32_t N, uint32_t K, int relu, float *y)
{
    for (uint32_t m = 0; m < M; m++) {
        const float *xr = x + (size_t)m * K;
        for (uint32_t n = 0; n < N; n++) {
            const float *wr = w + (size_t)n * K;
            double s = b ? b[n] : 0.0;
            for (uint32_t k = 0; k < K; k++) s += (double)xr[k] * wr[k];
            if (relu && s < 0) s = 0;
            y[(size_t)m * N + n] = (float)s;
        }
    }
}

void ref_linear_t(const float *x, const float *p, uint32_t M, uint32_t N, uint32_t K, float *y)
{
    double *acc = malloc((N ? N : 1) * sizeof *acc);
    for (uint32_t m = 0; m < M; m++) {
        memset(acc, 0, N * sizeof *acc);
        for (uint32_t k = 0; k < K; k++) {
            double xv = x[(size_t)m * K + k];
            const float *pr = p + (size_t)k * N;
            for (uint32_t n = 0; n < N; n++) acc[n] += xv * pr[n];
        }
        for (uint32_t n = 0; n < N; n++) y[(size_t)m * N + n] = (float)acc[n];
    }
    free(acc);
}

void ref_layernorm(const float *x, const float *r, const float *g, const float *b, uint32_t rows, uint32_t d, float eps,
                   float *y)
{
    double *v = malloc((d ? d : 1) * sizeof *v);
    for (uint32_t i = 0; i < rows; i++) {
        double mean = 0, var = 0;
        for (uint32_t k = 0; k < d; k++) {
            /* the residual sum is a float32 tensor in the reference */
            v[k] = r ? (double)(x[(size_t)i * d + k] + r[(size_t)i * d + k]) : (double)x[(size_t)i * d + k];
            mean += v[k];
        }
        mean /= d;
        for (uint32_t k = 0; k < d; k++) var += (v[k] - mean) * (v[k] - mean);
        var /= d;
        double inv = 1.0 / sqrt(var + (double)eps);
        for (uint32_t k = 0; k < d; k++) y[(size_t)i * d + k] = (float)((v[k] - mean) * inv * g[k] + b[k]);
    }
    free(v);
}

int ref_attn_masked(int i, int j, int qlen, int mlen, int same_length, int mem_len)
{
    if (j > mlen + i) return 1;
    if (same_length) {
        int klen = mlen + qlen, mask_len = klen - mem_len;
        int shift = mask_len > 0 ? qlen - mask_len : qlen;
        if (j <= i - shift) return 1;
    }
    return 0;
}

void ref_rel_attention(const float *q, const float *k, const float *v, const float *rk, const float *r_w_bias,
                       const float *r_r_bias, uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh, int same_length,
                       uint32_t mem_len, float *probs, float *terms, float *out)
{
    uint32_t klen = mlen + qlen, hd = H * dh;
    size_t plane = (size_t)H * qlen * klen;
    double scale = 1.0 / sqrt((double)dh);
    double *s = malloc((klen ? klen : 1) * sizeof *s);
    if (out) memset(out, 0, (size_t)qlen * hd * sizeof *out);
    for (uint32_t h = 0; h < H; h++) {
        const float *u = r_w_bias + (size_t)h * dh, *w = r_r_bias + (size_t)h * dh;
        for (uint32_t i = 0; i < qlen; i++) {
            const float *qi = q + (size_t)i * hd + (size_t)h * dh;
            size_t row = ((size_t)h * qlen + i) * klen;
            double mx = -INFINITY;
            int visible = 0;
            for (uint32_t j = 0; j < klen; j++) {
                int masked = ref_attn_masked((int)i, (int)j, (int)qlen, (int)mlen, same_length, (int)mem_len);
                double a = 0, b = 0, c = 0, d = 0;
                if (!masked) {
                    const float *kj = k + (size_t)j * hd + (size_t)h * dh;
                    const float *rj = rk + (size_t)(j + qlen - 1 - i) * hd + (size_t)h * dh;
                    for (uint32_t e = 0; e < dh; e++) {
                        a += (double)qi[e] * kj[e];
                        b += (double)qi[e] * rj[e];
                        c += (double)u[e] * kj[e];
                        d += (double)w[e] * rj[e];
                    }
                    visible = 1;
                }
                if (terms) {
                    terms[row + j] = (float)a;
                    terms[plane + row + j] = (float)b;
                    terms[2 * plane + row + j] = (float)c;
                    terms[3 * plane + row + j] = (float)d;
                }
                s[j] = masked ? -INFINITY : (a + b + c + d) * scale;
                if (s[j] > mx) mx = s[j];
            }
            double sum = 0;
            for (uint32_t j = 0; j < klen; j++) {
                /* A row with every key masked: the reference fills masked
                 * scores with the lowest float, so its softmax is uniform. */
                s[j] = visible ? exp(s[j] - mx) : 1.0;
                sum += s[j];
            }
            for (uint32_t j = 0; j < klen; j++) {
                s[j] /= sum;
                if (probs) probs[row + j] = (float)s[j];
            }
            if (!out) continue;
            float *oi = out + (size_t)i * hd + (size_t)h * dh;
            for (uint32_t e = 0; e < dh; e++) {
                double acc = 0;
                for (uint32_t j = 0; j < klen; j++) acc += s[j] * v[(size_t)j * hd + (size_t)h * dh + e];
                oi[e] = (float)acc;
            }
        }
    }
    free(s);
}

void ref_log_softmax(const float *x, uint32_t rows, uint32_t n, float *y)
{
    for (uint32_t r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * n;
        double mx = -INFINITY, sum = 0;
        for (uint32_t j = 0; j < n; j++) mx = xr[j] > mx ? xr[j] : mx;
        for (uint32_t j = 0; j < n; j++) sum += exp((double)xr[j] - mx);
        double lse = mx + log(sum);
        for (uint32_t j = 0; j < n; j++) y[(size_t)r * n + j] = (float)((double)xr[j] - lse);
    }
}

void ref_pos_emb(uint32_t klen, uint32_t d, int32_t clamp_len, float *R)
{
    for (uint32_t j = 0; j < klen; j++) {
        float pos = (float)(klen - 1 - j);
        if (clamp_len > 0 && pos > (float)clamp_len) pos = (float)clamp_len;
        for (uint32_t k = 0; k < d / 2; k++) {
            float inv_freq = (float)(1.0 / pow(10000.0, (double)(2 * k) / (double)d));
            float arg = pos * inv_freq; /* a float32 product, as in the reference */
            R[(size_t)j * d + k] = (float)sin((double)arg);
            R[(size_t)j * d + d / 2 + k] = (float)cos((double)arg);
        }
    }
}
