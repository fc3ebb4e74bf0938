/* The public C API (include/txlm.h): argument checks, the per-thread
 * error message, and calls into the engine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "copy_rate.h"
#include "sample.h"
#include "state.h"
#include "model_load.h"
#include "session.h"
#include "session_claim.h"
#include "txlm.h"
#include "txlm_api_error.h"
#include "txlm_vulkan.h"

static _Thread_local char last_error[512];

txlm_status txlm_api_fail(const txlm_err *e)
{
    snprintf(last_error, sizeof last_error, "%s", e->msg);
    return (txlm_status)e->code;
}

txlm_status txlm_api_bad_arg(const char *what)
{
    snprintf(last_error, sizeof last_error, "invalid argument: %s", what);
    return TXLM_ERR_INVALID_ARGUMENT;
}

#define fail txlm_api_fail
#define bad_arg txlm_api_bad_arg

const char *txlm_last_error(void) { return last_error; }

const char *txlm_status_string(txlm_status s)
{
    switch (s) {
    case TXLM_OK: return "ok";
    case TXLM_ERR_INVALID_ARGUMENT: return "invalid argument";
    case TXLM_ERR_IO: return "I/O error";
    case TXLM_ERR_FORMAT: return "format error";
    case TXLM_ERR_CHECKSUM: return "checksum mismatch";
    case TXLM_ERR_UNSUPPORTED: return "unsupported";
    case TXLM_ERR_NO_VULKAN: return "no Vulkan";
    case TXLM_ERR_NO_DEVICE: return "no device";
    case TXLM_ERR_OUT_OF_MEMORY: return "out of memory";
    case TXLM_ERR_DEVICE_LOST: return "device lost";
    case TXLM_ERR_VULKAN: return "Vulkan error";
    case TXLM_ERR_CANCELLED: return "cancelled";
    case TXLM_ERR_LIMIT: return "limit exceeded";
    case TXLM_ERR_NONFINITE: return "non-finite value";
    }
    return "unknown status";
}

txlm_status txlm_list_devices(txlm_device_info *out, uint32_t cap, uint32_t *count)
{
    if (!count || (cap && !out)) return bad_arg("txlm_list_devices: count is NULL or out is NULL with cap > 0");
    txlm_err e = {0};
    return txlm_vk_list(out, cap, count, &e) ? fail(&e) : TXLM_OK;
}

/* A context on a device opened by txlm_vk_open or txlm_vk_open_host
 * (dev: the program's, or NULL). */
static txlm_status context_create(const txlm_host_device *dev, const txlm_context_options *opts, txlm_context **out)
{
    *out = NULL;
    txlm_err e = {0};
    txlm_context *c = calloc(1, sizeof *c);
    if (!c) return txlm_fail(&e, TXLM_ERR_OUT_OF_MEMORY, "out of host memory"), fail(&e);
    int rc = dev ? txlm_vk_open_host(&c->vk, dev, opts, &e) : txlm_vk_open(&c->vk, opts, &e);
    if (!rc) rc = txlm_kernels_init(&c->vk, &c->kernels, &e);
    if (!rc) rc = txlm_buf_create(&c->vk, 256, TXLM_BUF_DEVICE, &c->dummy, &e);
    if (rc) {
        txlm_kernels_destroy(&c->kernels);
        txlm_vk_close(&c->vk);
        free(c);
        return fail(&e);
    }
    *out = c;
    return TXLM_OK;
}

txlm_status txlm_context_create(const txlm_context_options *opts, txlm_context **out)
{
    if (!out) return bad_arg("txlm_context_create: out is NULL");
    return context_create(NULL, opts, out);
}

txlm_status txlm_context_create_on_device(const txlm_host_device *dev, const txlm_context_options *opts,
                                          txlm_context **out)
{
    if (!out || !dev) return bad_arg("txlm_context_create_on_device: NULL argument");
    return context_create(dev, opts, out);
}

void txlm_context_destroy(txlm_context *c)
{
    if (!c) return;
    /* a program's device: every submission of txlm's has been waited for (vk_context.h) */
    if (c->vk.device && !c->vk.host) vkDeviceWaitIdle(c->vk.device);
    txlm_buf_destroy(&c->vk, &c->dummy);
    txlm_kernels_destroy(&c->kernels);
    txlm_vk_close(&c->vk);
    free(c);
}

txlm_status txlm_context_device(const txlm_context *c, txlm_device_info *out)
{
    if (!c || !out) return bad_arg("txlm_context_device: NULL argument");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", c->vk.props.deviceName);
    out->vendor_id = c->vk.props.vendorID;
    out->device_id = c->vk.props.deviceID;
    out->api_version = c->vk.props.apiVersion;
    out->subgroup_size = c->vk.subgroup_size;
    out->supported = out->preferred = 1;
    switch (c->vk.props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: out->type = TXLM_DEVICE_DISCRETE; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: out->type = TXLM_DEVICE_INTEGRATED; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: out->type = TXLM_DEVICE_VIRTUAL; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: out->type = TXLM_DEVICE_CPU; break;
    default: out->type = TXLM_DEVICE_OTHER; break;
    }
    return TXLM_OK;
}

uint64_t txlm_context_validation_messages(const txlm_context *c)
{
    return c ? __atomic_load_n(&c->vk.validation_messages, __ATOMIC_RELAXED) : 0;
}

txlm_status txlm_model_load(txlm_context *ctx, const char *path, const txlm_model_options *opts, txlm_model **out)
{
    if (!ctx || !path || !out) return bad_arg("txlm_model_load: NULL argument");
    txlm_err e = {0};
    unsigned flags = opts && opts->no_verify ? TXLM_OPEN_NO_VERIFY : 0;
    txlm_load_progress pr = {opts ? opts->progress : NULL, opts ? opts->progress_user : NULL};
    return txlm_model_open(ctx, path, flags, &pr, out, &e) ? fail(&e) : TXLM_OK;
}

void txlm_model_free(txlm_model *m) { txlm_model_close(m); }

txlm_status txlm_context_copy_rate(txlm_context *ctx, double *bytes_per_s)
{
    if (!ctx || !bytes_per_s) return bad_arg("txlm_context_copy_rate: NULL argument");
    txlm_err e = {0};
    return txlm_copy_rate(ctx, bytes_per_s, &e) ? fail(&e) : TXLM_OK;
}

void txlm_model_get_params(const txlm_model *m, txlm_model_params *p)
{
    const txlm_hparams *h = &m->h;
    *p = (txlm_model_params){
        .n_token = h->n_token, .d_model = h->d_model, .d_embed = h->d_embed, .n_head = h->n_head,
        .d_head = h->d_head, .d_inner = h->d_inner, .n_layer = h->n_layer, .div_val = h->div_val,
        .n_clusters = txlm_n_clusters(h), .clamp_len = h->clamp_len, .mem_len = h->mem_len,
        .tgt_len = h->tgt_len, .pre_lnorm = h->pre_lnorm, .same_length = h->same_length,
        .tokenizer = (txlm_tokenizer_type)m->vocab.kind, .eos_id = m->vocab.eos_id, .unk_id = m->vocab.unk_id,
    };
}

txlm_status txlm_session_create(txlm_model *m, const txlm_session_options *opts, txlm_session **out)
{
    if (!m || !out) return bad_arg("txlm_session_create: NULL argument");
    txlm_err e = {0};
    return txlm_session_open(m, opts, out, &e) ? fail(&e) : TXLM_OK;
}

void txlm_session_free(txlm_session *s) { txlm_session_close(s); }

void txlm_session_reset(txlm_session *s)
{
    if (s) txlm_session_forget(s, 0);
}

uint32_t txlm_session_memory_len(const txlm_session *s) { return s ? s->mlen : 0; }

/* One segment through a claimed session (f->session). */
static txlm_status feed_claimed(const txlm_stream_feed *f, const char *what)
{
    txlm_err e = {0};
    if (txlm_session_claim(f->session, what, &e)) return fail(&e);
    int rc = txlm_session_run(f->session, f, &e);
    txlm_session_release(f->session);
    return rc ? fail(&e) : TXLM_OK;
}

txlm_status txlm_session_feed(txlm_session *s, const int32_t *tokens, uint32_t n, float *logprobs)
{
    if (!s || (!tokens && n)) return bad_arg("txlm_session_feed: NULL argument");
    txlm_stream_feed f = {.session = s, .tokens = tokens, .n = n, .logprobs = logprobs};
    return feed_claimed(&f, "txlm_session_feed");
}

txlm_status txlm_session_feed_rows(txlm_session *s, const int32_t *tokens, uint32_t n, uint32_t first_row,
                                   float *logprobs)
{
    if (!s || (!tokens && n)) return bad_arg("txlm_session_feed_rows: NULL argument");
    if (first_row > n) return bad_arg("txlm_session_feed_rows: first_row > n");
    txlm_stream_feed f = {.session = s, .tokens = tokens, .n = n, .first_row = first_row, .logprobs = logprobs};
    return feed_claimed(&f, "txlm_session_feed_rows");
}

void txlm_session_set_seed(txlm_session *s, uint64_t seed)
{
    if (s) s->rng = seed;
}

txlm_status txlm_session_sample(txlm_session *s, const txlm_sampling *opts, int32_t *token)
{
    return txlm_session_sample_penalized(s, opts, NULL, token);
}

txlm_status txlm_session_sample_penalized(txlm_session *s, const txlm_sampling *opts, const txlm_repeat_penalty *penalty,
                                          int32_t *token)
{
    if (!s || !token) return bad_arg("txlm_session_sample: NULL argument");
    txlm_sampling def = {.temperature = 1.0f};
    txlm_err e = {0};
    if (txlm_session_claim(s, "txlm_session_sample", &e)) return fail(&e);
    int rc = txlm_session_draw(s, opts ? opts : &def, penalty, token, &e);
    txlm_session_release(s);
    return rc ? fail(&e) : TXLM_OK;
}

size_t txlm_session_state_size(const txlm_session *s) { return s ? txlm_state_size(s) : 0; }

txlm_status txlm_session_save(txlm_session *s, void *buf, size_t cap, size_t *written)
{
    if (!s || !buf || !written) return bad_arg("txlm_session_save: NULL argument");
    txlm_err e = {0};
    return txlm_state_save(s, buf, cap, written, &e) ? fail(&e) : TXLM_OK;
}

txlm_status txlm_session_restore(txlm_session *s, const void *buf, size_t size)
{
    if (!s || !buf) return bad_arg("txlm_session_restore: NULL argument");
    txlm_err e = {0};
    return txlm_state_load(s, buf, size, &e) ? fail(&e) : TXLM_OK;
}

txlm_status txlm_session_save_file(txlm_session *s, const char *path)
{
    if (!s || !path) return bad_arg("txlm_session_save_file: NULL argument");
    txlm_err e = {0};
    return txlm_state_save_file(s, path, &e) ? fail(&e) : TXLM_OK;
}

txlm_status txlm_session_restore_file(txlm_session *s, const char *path)
{
    if (!s || !path) return bad_arg("txlm_session_restore_file: NULL argument");
    txlm_err e = {0};
    return txlm_state_load_file(s, path, &e) ? fail(&e) : TXLM_OK;
}

txlm_status txlm_session_capture_attention(txlm_session *s, txlm_capture_mode mode)
{
    if (!s || mode < TXLM_CAPTURE_OFF || mode > TXLM_CAPTURE_TERMS) return bad_arg("txlm_session_capture_attention: no session or mode out of range");
    txlm_err e = {0};
    return txlm_session_set_capture(s, (int)mode, &e) ? fail(&e) : TXLM_OK;
}

txlm_status txlm_session_attention(txlm_session *s, uint32_t layer, float *probs, float *terms,
                                   txlm_attention_shape *shape)
{
    if (!s || layer >= s->m->h.n_layer) return bad_arg("txlm_session_attention: no session or layer out of range");
    if (!s->capture || !s->cap_qlen) return bad_arg("txlm_session_attention: nothing captured (enable capture, then feed)");
    if (terms && s->capture < TXLM_CAPTURE_TERMS) return bad_arg("txlm_session_attention: terms were not captured");
    txlm_attention_shape sh = {s->m->h.n_layer, s->m->h.n_head, s->cap_qlen, s->cap_mlen, s->cap_mlen + s->cap_qlen};
    if (shape) *shape = sh;
    size_t n = (size_t)sh.n_head * sh.qlen * sh.klen;
    txlm_err e = {0};
    if (probs && txlm_buf_download(&s->m->ctx->vk, &s->cap_probs[layer], 0, probs, n * 4, &e)) return fail(&e);
    if (terms && txlm_buf_download(&s->m->ctx->vk, &s->cap_terms[layer], 0, terms, 4 * n * 4, &e)) return fail(&e);
    return TXLM_OK;
}

txlm_status txlm_session_score(txlm_session *s, const int32_t *tokens, const int32_t *targets, uint32_t n,
                               float *target_logprobs)
{
    if (!s || !tokens || !targets || !target_logprobs) return bad_arg("txlm_session_score: NULL argument");
    txlm_stream_feed f = {.session = s, .tokens = tokens, .n = n, .targets = targets, .target_logprobs = target_logprobs};
    return feed_claimed(&f, "txlm_session_score");
}
