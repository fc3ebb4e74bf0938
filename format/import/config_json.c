/* HuggingFace TransfoXLConfig (config.json) -> txlm_hparams. Keys the engine
 * does not need (dropout, adaptive, init ranges, ...) are ignored; the
 * keys it does need are type-checked one by one. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <txlm_status.h>

#include "open_input.h"
#include "pack.h"

#define CONFIG_CAP (16u << 20)

typedef struct cfg {
    const char *where;
    const cJSON *root;
    txlm_err *err;
    txlm_config_notes *notes; /* NULL: no HF defaults, no notes */
} cfg;

/* Keys read below, and keys HF's TransfoXLConfig and PretrainedConfig
 * write that say nothing about inference: neither is warned about. */
static const char *const known_keys[] = {
    "n_token", "vocab_size", "d_model", "d_embed", "n_head", "d_head", "d_inner", "n_layer", "div_val", "cutoffs",
    "tie_projs", "proj_share_all_but_first", "tie_weight", "tie_word_embeddings", "pre_lnorm", "untie_r",
    "same_length", "clamp_len", "mem_len", "tgt_len", "ext_len", "attn_type", "layer_norm_epsilon", "sample_softmax",
    /* training only, or generic to every HF model */
    "adaptive", "dropout", "dropatt", "init", "init_range", "init_std", "proj_init_std", "eos_token_id",
    "bos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id", "model_type", "architectures",
    "transformers_version", "torch_dtype", "_name_or_path", "return_dict", "output_hidden_states", "output_attentions",
    "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads", "tie_encoder_decoder", "is_decoder",
    "is_encoder_decoder", "cross_attention_hidden_size", "add_cross_attention", "chunk_size_feed_forward",
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups", "diversity_penalty",
    "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty", "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores",
    "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens", "finetuning_task", "id2label",
    "label2id", "tokenizer_class", "prefix", "task_specific_params", "problem_type", "use_cache",
};

static void note(cfg *c, const char *fmt, ...) TXLM_PRINTF(2, 3);
static void note(cfg *c, const char *fmt, ...)
{
    if (!c->notes) return;
    size_t n = strlen(c->notes->text), cap = sizeof c->notes->text;
    if (n + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->notes->text + n, cap - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(c->notes->text);
    c->notes->text[n] = '\n';
    c->notes->text[n + 1] = 0;
}

/* Every key the config has that txlm does not know, in one note. */
static void unknown_keys(cfg *c)
{
    char list[512] = "";
    int count = 0;
    for (const cJSON *e = c->root->child; e; e = e->next) {
        int known = 0;
        for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0] && !known; i++) known = !strcmp(e->string, known_keys[i]);
        if (known) continue;
        size_t n = strlen(list);
        if (n + 8 < sizeof list) snprintf(list + n, sizeof list - n, "%s'%.60s'", count ? ", " : "", e->string);
        count++;
    }
    if (count)
        note(c, "warning: %s: %d key%s txlm does not know (misspelt?), ignored: %s", c->where, count, count > 1 ? "s" : "",
             list);
}

static const char *type_name(const cJSON *j)
{
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    if (cJSON_IsNull(j)) return "null";
    return "an invalid value";
}

/* The key's value, NULL when absent or null. Python's json keeps the last
 * of repeated keys and cJSON the first, so repeats are refused. */
static int get(cfg *c, const char *key, const cJSON **out)
{
    *out = NULL;
    int seen = 0;
    for (const cJSON *e = c->root->child; e; e = e->next)
        if (strcmp(e->string, key) == 0) {
            if (seen++) return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key '%s' appears more than once", c->where, key);
            if (!cJSON_IsNull(e)) *out = e;
        }
    return 0;
}

static int as_int(cfg *c, const char *key, const cJSON *j, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(j))
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key '%s': expected an integer, got %s", c->where, key, type_name(j));
    double d = j->valuedouble;
    if (d != floor(d) || !isfinite(d))
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key '%s': expected an integer, got %g", c->where, key, d);
    if (d < (double)lo || d > (double)hi)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key '%s': %.0f out of range [%" PRId64 ", %" PRId64 "]", c->where, key,
                         d, lo, hi);
    *out = (int64_t)d;
    return 0;
}

static int opt_u32(cfg *c, const char *key, uint32_t def, uint32_t *out, int *present)
{
    const cJSON *j;
    int64_t v;
    int rc = get(c, key, &j);
    if (rc) return rc;
    if (present) *present = j != NULL;
    if (!j) {
        *out = def;
        return 0;
    }
    rc = as_int(c, key, j, 0, UINT32_MAX, &v);
    if (rc) return rc;
    *out = (uint32_t)v;
    return 0;
}

static int req_u32(cfg *c, const char *key, uint32_t *out)
{
    int present;
    int rc = opt_u32(c, key, 0, out, &present);
    if (rc) return rc;
    if (!present) return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: required key '%s' is missing", c->where, key);
    return 0;
}

static int as_bool(cfg *c, const char *key, const cJSON *j, uint8_t *out)
{
    if (cJSON_IsBool(j)) {
        *out = cJSON_IsTrue(j) ? 1 : 0;
        return 0;
    }
    /* Older configs written from argparse namespaces use 0/1. */
    if (cJSON_IsNumber(j) && (j->valuedouble == 0.0 || j->valuedouble == 1.0)) {
        *out = j->valuedouble == 1.0;
        return 0;
    }
    return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key '%s': expected a boolean, got %s", c->where, key, type_name(j));
}

static int opt_bool(cfg *c, const char *key, uint8_t def, uint8_t *out, int *present)
{
    const cJSON *j;
    int rc = get(c, key, &j);
    if (rc) return rc;
    if (present) *present = j != NULL;
    *out = def;
    return j ? as_bool(c, key, j, out) : 0;
}

static int read_n_token(cfg *c, txlm_hparams *h)
{
    uint32_t a, b;
    int has_a, has_b;
    int rc = opt_u32(c, "n_token", 0, &a, &has_a);
    if (!rc) rc = opt_u32(c, "vocab_size", 0, &b, &has_b);
    if (rc) return rc;
    if (!has_a && !has_b) return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: required key 'n_token' (or 'vocab_size') is missing", c->where);
    if (has_a && has_b && a != b)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: n_token %" PRIu32 " and vocab_size %" PRIu32 " disagree", c->where, a, b);
    h->n_token = has_a ? a : b;
    return 0;
}

static int read_cutoffs(cfg *c, txlm_hparams *h)
{
    const cJSON *j;
    int rc = get(c, "cutoffs", &j);
    if (rc || !j) return rc;
    if (!cJSON_IsArray(j))
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key 'cutoffs': expected an array, got %s", c->where, type_name(j));
    int n = cJSON_GetArraySize(j);
    if (n > TXLM_MAX_CUTOFFS)
        return txlm_fail(c->err, TXLM_ERR_UNSUPPORTED, "%s: key 'cutoffs': %d cutoffs, at most %d supported", c->where, n,
                         TXLM_MAX_CUTOFFS);
    uint32_t i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char key[32];
        int64_t v;
        snprintf(key, sizeof key, "cutoffs[%" PRIu32 "]", i);
        rc = as_int(c, key, e, 0, UINT32_MAX, &v);
        if (rc) return rc;
        h->cutoffs[i] = (uint32_t)v;
    }
    h->n_cutoffs = i;
    return 0;
}

/* HF derives tie_projs from proj_share_all_but_first; an explicit
 * tie_projs (as save_pretrained writes it) overrides that. */
static int read_tie_projs(cfg *c, txlm_hparams *h)
{
    uint8_t share;
    int rc = opt_bool(c, "proj_share_all_but_first", 1, &share, NULL);
    if (rc) return rc;
    for (uint32_t i = 0; i <= h->n_cutoffs; i++) h->tie_projs[i] = i > 0 && share;
    const cJSON *j;
    rc = get(c, "tie_projs", &j);
    if (rc || !j) return rc;
    if (!cJSON_IsArray(j))
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key 'tie_projs': expected an array, got %s", c->where, type_name(j));
    int n = cJSON_GetArraySize(j);
    if (n > (int)h->n_cutoffs + 1)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key 'tie_projs': %d entries for %" PRIu32 " clusters", c->where, n,
                         h->n_cutoffs + 1);
    memset(h->tie_projs, 0, sizeof h->tie_projs);
    uint32_t i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char key[32];
        snprintf(key, sizeof key, "tie_projs[%" PRIu32 "]", i);
        rc = as_bool(c, key, e, &h->tie_projs[i]);
        if (rc) return rc;
    }
    return 0;
}

static int read_signed(cfg *c, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out)
{
    const cJSON *j;
    int rc = get(c, key, &j);
    if (rc) return rc;
    *out = def;
    return j ? as_int(c, key, j, lo, hi, out) : 0;
}

static int read_epsilon(cfg *c, txlm_hparams *h)
{
    const cJSON *j;
    int rc = get(c, "layer_norm_epsilon", &j);
    if (rc) return rc;
    h->layer_norm_epsilon = 1e-5f;
    if (!j) return 0;
    if (!cJSON_IsNumber(j))
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: key 'layer_norm_epsilon': expected a number, got %s", c->where,
                         type_name(j));
    h->layer_norm_epsilon = (float)j->valuedouble;
    return 0;
}

/* HF's TransfoXLConfig defaults for what inference depends on, where the
 * caller asks for them (txlm-pack); without them these were 0, which
 * means no memory at all. */
static int hf_default_u32(cfg *c, const char *key, uint32_t hf, uint32_t *out)
{
    int present;
    int rc = opt_u32(c, key, 0, out, &present);
    if (!rc && !present && c->notes && c->notes->hf_defaults) {
        *out = hf;
        note(c, "%s: %s not given: HF's default %" PRIu32, c->where, key, hf);
    }
    return rc;
}

/* tie_weight (HF before v4, the authors) or tie_word_embeddings (what v4
 * writes, and reads for the output layer's tie). */
static int read_tie_weight(cfg *c, txlm_hparams *h)
{
    uint8_t a = 1, b = 1;
    int has_a, has_b;
    int rc = opt_bool(c, "tie_weight", 1, &a, &has_a);
    if (!rc) rc = opt_bool(c, "tie_word_embeddings", 1, &b, &has_b);
    if (rc) return rc;
    if (has_a && has_b && a != b)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: tie_weight (%s) and tie_word_embeddings (%s) disagree", c->where,
                         a ? "true" : "false", b ? "true" : "false");
    h->tie_weight = has_b ? b : a;
    return 0;
}

static int read_lengths(cfg *c, txlm_hparams *h)
{
    int64_t v;
    int present;
    int rc = opt_bool(c, "same_length", 0, &h->same_length, &present);
    if (!rc && !present && c->notes && c->notes->hf_defaults) {
        h->same_length = 1;
        note(c, "%s: same_length not given: HF's default true", c->where);
    }
    const cJSON *j;
    if (!rc) rc = get(c, "clamp_len", &j);
    if (!rc) rc = read_signed(c, "clamp_len", -1, INT32_MIN, INT32_MAX, &v);
    if (rc) return rc;
    h->clamp_len = (int32_t)v;
    if (!j && c->notes && c->notes->hf_defaults) {
        h->clamp_len = 1000;
        note(c, "%s: clamp_len not given: HF's default 1000", c->where);
    }
    if ((rc = hf_default_u32(c, "mem_len", 1600, &h->mem_len))) return rc;
    return hf_default_u32(c, "tgt_len", 128, &h->tgt_len);
}

static int read_all(cfg *c, txlm_hparams *h)
{
    int rc, has_embed;
    int64_t v;
    if ((rc = read_n_token(c, h))) return rc;
    if ((rc = req_u32(c, "d_model", &h->d_model))) return rc;
    if ((rc = opt_u32(c, "d_embed", h->d_model, &h->d_embed, &has_embed))) return rc;
    if ((rc = req_u32(c, "n_head", &h->n_head))) return rc;
    if ((rc = req_u32(c, "d_head", &h->d_head))) return rc;
    if ((rc = req_u32(c, "d_inner", &h->d_inner))) return rc;
    if ((rc = req_u32(c, "n_layer", &h->n_layer))) return rc;
    if ((rc = opt_u32(c, "div_val", 1, &h->div_val, NULL))) return rc;
    if ((rc = read_cutoffs(c, h))) return rc;
    if ((rc = read_tie_projs(c, h))) return rc;
    if ((rc = read_tie_weight(c, h))) return rc;
    if ((rc = opt_bool(c, "pre_lnorm", 0, &h->pre_lnorm, NULL))) return rc;
    if ((rc = opt_bool(c, "untie_r", 1, &h->untie_r, NULL))) return rc;
    if ((rc = read_lengths(c, h))) return rc;
    if ((rc = opt_u32(c, "ext_len", 0, &h->ext_len, NULL))) return rc;
    if ((rc = opt_u32(c, "attn_type", 0, &h->attn_type, NULL))) return rc;
    if ((rc = read_epsilon(c, h))) return rc;
    if ((rc = read_signed(c, "sample_softmax", -1, INT32_MIN, INT32_MAX, &v))) return rc;
    if (v > 0)
        return txlm_fail(c->err, TXLM_ERR_UNSUPPORTED, "%s: sample_softmax %" PRId64 " is not supported (must be <= 0)",
                         c->where, v);
    if (h->attn_type != 0)
        return txlm_fail(c->err, TXLM_ERR_UNSUPPORTED,
                         "%s: attn_type %" PRIu32 " is not supported (only 0, relative attention)", c->where, h->attn_type);
    if (h->ext_len != 0)
        return txlm_fail(c->err, TXLM_ERR_UNSUPPORTED, "%s: ext_len %" PRIu32 " is not supported (must be 0)", c->where,
                         h->ext_len);
    return 0;
}

static int parse(const char *where, const char *text, uint64_t len, txlm_hparams *out, txlm_config_notes *notes,
                 txlm_err *err)
{
    if (len > CONFIG_CAP) return txlm_fail(err, TXLM_ERR_LIMIT, "%s: %" PRIu64 " bytes, more than %u", where, len, CONFIG_CAP);
    if (memchr(text, 0, len)) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: contains a NUL byte", where);
    char *copy = malloc(len + 1);
    if (!copy) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    memcpy(copy, text, len);
    copy[len] = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(copy, &end, 1);
    int rc;
    if (!root) {
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: not valid JSON (near byte %" PRIu64 ")", where,
                       end ? (uint64_t)(end - copy) : 0);
    } else if (!cJSON_IsObject(root)) {
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: top level is not a JSON object", where);
    } else {
        txlm_hparams h;
        memset(&h, 0, sizeof h);
        cfg c = {where, root, err, notes};
        if (notes) notes->text[0] = 0;
        rc = read_all(&c, &h);
        if (!rc) unknown_keys(&c);
        char why[256];
        if (!rc && txlm_hparams_validate(&h, why, sizeof why) != 0)
            rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: %s", where, why);
        if (!rc) *out = h;
    }
    cJSON_Delete(root);
    free(copy);
    return rc;
}

int txlm_config_parse_json(const char *text, uint64_t len, txlm_hparams *out, txlm_err *err)
{
    if (!text && len) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "config.json: NULL text");
    return parse("config.json", text ? text : "", len, out, NULL, err);
}

int txlm_config_load_json(const char *path, txlm_hparams *out, txlm_err *err)
{
    return txlm_config_load_json_notes(path, out, NULL, err);
}

int txlm_config_load_json_notes(const char *path, txlm_hparams *out, txlm_config_notes *notes, txlm_err *err)
{
    FILE *f;
    int open_rc = txlm_fopen_input(path, &f, err);
    if (open_rc) return open_rc;
    char *buf = malloc(CONFIG_CAP + 1);
    if (!buf) {
        fclose(f);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    /* One byte past the cap tells "too large" apart from "exactly the cap". */
    size_t n = fread(buf, 1, CONFIG_CAP + 1, f);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? txlm_fail(err, TXLM_ERR_IO, "%s: read error", path) : parse(path, buf, n, out, notes, err);
    free(buf);
    return rc;
}
