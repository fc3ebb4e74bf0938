/*
 * txlm: Transformer-XL inference on Vulkan compute.
 *
 * Three opaque handles:
 *   txlm_context  a Vulkan device (instance, queue, pipelines): txlm's own,
 *                 or the program's (txlm_vulkan.h);
 *   txlm_model    weights on that device, read-only once loaded;
 *   txlm_session  the per-layer memory of one text stream.
 *
 * Every function that can fail returns a txlm_status; the reason, one
 * line, is then available from txlm_last_error() on the same thread.
 *
 * Thread safety: a context and the models loaded on it may be shared by
 * threads (loading, tokenizing, creating sessions and detokenizers at
 * once); a session or a detokenizer is used by one thread at a time (a
 * feed, score, draw, next-token or batch call on a session already inside
 * another call is refused with TXLM_ERR_INVALID_ARGUMENT, not raced). Calls
 * that submit GPU work serialise on the context's queue. txlm_list_devices
 * and txlm_context_create may run at any time, beside other contexts' calls;
 * a context is destroyed by one thread once its other calls have returned
 * (docs/api.md, "Thread safety", lists every call).
 */
#ifndef TXLM_H
#define TXLM_H

#include <stddef.h>
#include <stdint.h>

#include "txlm_status.h"
#include "txlm_files.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TXLM_VERSION_MAJOR 0
#define TXLM_VERSION_MINOR 1
#define TXLM_VERSION_PATCH 0

/* Static English name of a status ("format error", ...). */
TXLM_API const char *txlm_status_string(txlm_status s);
/* The message of the last failed call on this thread ("" if none). */
TXLM_API const char *txlm_last_error(void);

/* The library's own version, "MAJOR.MINOR.PATCH": that of the libtxlm
 * loaded at run time, which may differ from this header's TXLM_VERSION_*. */
TXLM_API const char *txlm_version(void);
/* The same as one number: MAJOR * 10000 + MINOR * 100 + PATCH. */
TXLM_API uint32_t txlm_version_number(void);

typedef enum txlm_log_level {
    TXLM_LOG_ERROR = 0,
    TXLM_LOG_WARNING = 1,
    TXLM_LOG_INFO = 2,
} txlm_log_level;
/* Receives one message (one line, no newline) the library would print,
 * at level TXLM_LOG_ERROR or TXLM_LOG_WARNING; TXLM_LOG_INFO only what a
 * debugging switch asks for (TXLM_EXPLAIN_KERNELS, docs/environment.md). */
typedef void (*txlm_log_fn)(void *user, txlm_log_level level, const char *message);
/* Where the library's messages (Vulkan validation and driver messages) go:
 * to fn, or to stderr when fn is NULL (the default). Process-wide; fn is
 * called on whichever thread's Vulkan call reports, so it must be
 * thread-safe. It may be set or changed at any time, contexts open or not:
 * fn and user change together under a lock, and each message goes to the
 * callback set when it is reported. */
TXLM_API void txlm_set_log_callback(txlm_log_fn fn, void *user);

/* ---- devices and contexts ------------------------------------------- */

typedef struct txlm_context txlm_context;
typedef struct txlm_model txlm_model;
typedef struct txlm_session txlm_session;

typedef enum txlm_device_type {
    TXLM_DEVICE_OTHER = 0,
    TXLM_DEVICE_INTEGRATED = 1,
    TXLM_DEVICE_DISCRETE = 2,
    TXLM_DEVICE_VIRTUAL = 3,
    TXLM_DEVICE_CPU = 4,
} txlm_device_type;

typedef struct txlm_device_info {
    char name[256];
    txlm_device_type type;
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t api_version;
    uint64_t device_local_bytes; /* largest device-local heap */
    uint32_t subgroup_size;
    int supported;               /* meets txlm's requirements (Vulkan 1.2, compute queue) */
    int preferred;               /* the one txlm_context_create picks by default */
} txlm_device_info;

/* Lists the Vulkan devices. *count receives the number; at most `cap`
 * entries are written to `out` (which may be NULL with cap 0). */
TXLM_API txlm_status txlm_list_devices(txlm_device_info *out, uint32_t cap, uint32_t *count);

typedef struct txlm_context_options {
    /* Device index or a substring of its name; NULL = $TXLM_DEVICE, then
     * the preferred device (discrete > integrated > virtual > CPU). */
    const char *device;
    /* Enable VK_LAYER_KHRONOS_validation; every message it prints is
     * counted (txlm_context_validation_messages) and logged to stderr. */
    int validation;
    /* Cap on device memory the context may allocate, 0 = no cap. */
    uint64_t memory_budget;
    /* At most this many kernel dispatches in one submission to the queue
     * (0 = no bound; $TXLM_SUBMIT_DISPATCHES where 0): a segment's work is
     * then submitted in pieces, each waited for before the next, so that
     * other work on the GPU (the display, a renderer on the same queue)
     * runs between them. The numbers do not change. */
    uint32_t max_submit_dispatches;
    /* 1: ask for a queue of low global priority (VK_KHR_global_priority or
     * VK_EXT_global_priority) where the device offers it; a refusal falls
     * back to the default priority silently. txlm_context_create only: on
     * a program's device (txlm_vulkan.h) the queue's priority is the program's. */
    int low_priority;
} txlm_context_options;

/* Opens a device (opts may be NULL: all defaults). On failure *out is NULL. */
TXLM_API txlm_status txlm_context_create(const txlm_context_options *opts, txlm_context **out);
/* Destroys a context whose models are freed; NULL is ignored. */
TXLM_API void txlm_context_destroy(txlm_context *ctx);
/* The device the context runs on. */
TXLM_API txlm_status txlm_context_device(const txlm_context *ctx, txlm_device_info *out);
/* Validation messages seen so far (0 when validation is off). */
TXLM_API uint64_t txlm_context_validation_messages(const txlm_context *ctx);
/* The device's memory speed as its buffer-to-buffer copy rate: bytes
 * copied per second, each read once and written once (the median of 5
 * timings of 4 copies of up to 256 MiB; twice the copy is allocated for
 * the call). The yardstick for one-token steps, which mostly stream
 * weights: compare txlm_model_step_bytes() x tokens/s with it. */
TXLM_API txlm_status txlm_context_copy_rate(txlm_context *ctx, double *bytes_per_s);

/* ---- progress and cancelling ----------------------------------------- */

/* Told, on the calling thread, how far a long call has got (fraction in
 * [0, 1]). Returning non-zero cancels it: the call stops at its next safe
 * point and returns TXLM_ERR_CANCELLED. */
typedef int (*txlm_progress_fn)(void *user, double fraction);

/* ---- models ---------------------------------------------------------- */

typedef struct txlm_model_options {
    int no_verify;         /* skip per-tensor hashes at load */
    txlm_progress_fn progress; /* called after each tensor is on the device; NULL = none */
    void *progress_user;
} txlm_model_options;

/* Reads a .txlm file, verifies it (per-tensor hashes unless no_verify)
 * and uploads it; opts may be NULL. On failure *out is NULL. */
TXLM_API txlm_status txlm_model_load(txlm_context *ctx, const char *path, const txlm_model_options *opts,
                            txlm_model **out);
/* Frees a model whose sessions are freed; NULL is ignored. */
TXLM_API void txlm_model_free(txlm_model *m);

typedef enum txlm_tokenizer_type {
    TXLM_TOKENIZER_WORD = 0,       /* words; wt103 models normalise raw text first */
    TXLM_TOKENIZER_CHAR_BYTE = 1,  /* one token per byte (enwik8) */
    TXLM_TOKENIZER_CHAR_TEXT8 = 2, /* one token per character, '_' for space (text8) */
} txlm_tokenizer_type;

typedef struct txlm_model_params {
    uint32_t n_token, d_model, d_embed, n_head, d_head, d_inner, n_layer;
    uint32_t div_val, n_clusters;
    int32_t clamp_len;
    uint32_t mem_len, tgt_len;
    int pre_lnorm, same_length;
    txlm_tokenizer_type tokenizer;
    int32_t eos_id, unk_id;        /* -1 when the vocabulary has none */
} txlm_model_params;

/* The hyper-parameters and vocabulary facts of a loaded model (m not NULL). */
TXLM_API void txlm_model_get_params(const txlm_model *m, txlm_model_params *out);
/* Bytes of weights one generated token reads on the device: every layer's
 * tensors (but the position projection, whose products are kept) and the
 * output layer's head (its cluster's rows, bias and projection, and the
 * tail clusters' logits); a tail cluster's weights are read only when a
 * draw falls in it. 0 for NULL. */
TXLM_API uint64_t txlm_model_step_bytes(const txlm_model *m);

/* Memory a model or a session holds: device memory (buffers allocated on
 * the device, what counts against txlm_context_options.memory_budget) and
 * the host memory of its largest parts (a model's vocabulary, tokenizer
 * tables and host copies; a session's host rows), not the driver's own. */
typedef struct txlm_memory_use {
    uint64_t device_bytes;
    uint64_t host_bytes;
} txlm_memory_use;
TXLM_API txlm_status txlm_model_memory(const txlm_model *m, txlm_memory_use *out);
/* A session's, attention capture buffers included, the model's not. */
TXLM_API txlm_status txlm_session_memory(const txlm_session *s, txlm_memory_use *out);

/* ---- text ------------------------------------------------------------ */

/* Text -> token ids with the model's own tokenizer (word-level with the
 * wt103 normalisation, or character-level, per the model's vocabulary).
 * *ids is allocated; release it with txlm_free. */
TXLM_API txlm_status txlm_tokenize(txlm_model *m, const char *text, size_t len, int32_t **ids, size_t *n);
/* Token ids -> text (NUL-terminated, allocated; release with txlm_free). */
TXLM_API txlm_status txlm_detokenize(txlm_model *m, const int32_t *ids, size_t n, char **text);
/* The vocabulary symbol of one id (not NUL-terminated), or NULL. */
TXLM_API const char *txlm_token_symbol(const txlm_model *m, int32_t id, size_t *len);
/* The id of a vocabulary symbol, matched byte for byte (no lower-casing,
 * no normalisation): *id gets it, or -1 when the vocabulary has no such
 * symbol (still TXLM_OK). Repeated symbols give their first id. */
TXLM_API txlm_status txlm_token_id(txlm_model *m, const char *sym, size_t len, int32_t *id);
/* Symbols in the vocabulary (ids 0..size-1); 0 for NULL. The special ids
 * are txlm_model_params' eos_id and unk_id. */
TXLM_API uint32_t txlm_vocab_size(const txlm_model *m);
/* Releases what txlm_tokenize and txlm_detokenize allocated. */
TXLM_API void txlm_free(void *p);

/* Tokens with where they came from, for lining scores up with the text
 * (txlm score --words). Token k's span is the bytes of the text whose
 * characters it holds: a word model's word, a character model's byte, an
 * <eos>'s line break (the <S> that opens an lm1b line: no bytes, begin ==
 * end at the line's start); a wt103 model's tokens are traced back through the
 * normalisation (docs/tokenizers.md, "Where tokens come from"): the ' of
 * "don't"'s 't, the “ that became ", the - of an @-@, the no-break space
 * of 1 @.@ 000. The text's words are its runs of characters that are not
 * whitespace (Python's str.isspace, as str.split() cuts), except that a
 * token spanning whitespace (that no-break space, or a word model's token
 * holding one) joins the words on either side into one. Every token but a
 * line break's <eos> and a character model's whitespace belongs to one
 * word; a word made only of characters the tokenizer drops (control
 * characters) has no tokens. */
typedef struct txlm_span {
    size_t begin, end; /* bytes [begin, end) of the text */
} txlm_span;

#define TXLM_NO_WORD ((size_t)-1)

typedef struct txlm_token_spans {
    size_t n;            /* tokens, exactly as txlm_tokenize gives them */
    int32_t *ids;        /* [n] */
    txlm_span *spans;    /* [n] the bytes of the text each token came from */
    size_t *word;        /* [n] the word each token belongs to, or TXLM_NO_WORD */
    size_t n_words;
    txlm_span *words;    /* [n_words] the text's words, in order */
    size_t guessed;      /* tokens whose span could not be traced and is a guess (the rest of their line);
                            0 unless a line holds something the rules cannot be followed through, such as
                            malformed UTF-8 that a removed character completes */
} txlm_token_spans;

/* Tokenizes as txlm_tokenize does and traces each token back to the text.
 * *out is filled (all arrays allocated; free with txlm_token_spans_free);
 * on failure it is zeroed. */
TXLM_API txlm_status txlm_tokenize_spans(txlm_model *m, const char *text, size_t len, txlm_token_spans *out);
/* Frees the arrays and zeroes *t; NULL is ignored. */
TXLM_API void txlm_token_spans_free(txlm_token_spans *t);

/* Streaming detokenization: one token in, the text that is now final out.
 * The pieces of a stream, with what txlm_detokenizer_flush returns at its
 * end, put together are exactly txlm_detokenize of the whole sequence (a
 * word model's spaces, a wt103 model's rules: "@-@" joins, no space before
 * punctuation, quotes; <eos> as a line break). Text a later token can
 * still change (a wt103 model's last word, which "@-@" may join to the
 * next) is held back until it is certain; a token's cost does not grow
 * with the stream. m must outlive the detokenizer; one thread at a time
 * uses it (several detokenizers of one model may run in parallel). */
typedef struct txlm_detokenizer txlm_detokenizer;
TXLM_API txlm_status txlm_detokenizer_create(txlm_model *m, txlm_detokenizer **out);
/* Token id in; *piece gets the text now final (NUL-terminated, *len bytes,
 * often empty), valid until the next call on d. len may be NULL. An id
 * outside the vocabulary is refused and changes nothing. */
TXLM_API txlm_status txlm_detokenizer_push(txlm_detokenizer *d, int32_t id, const char **piece, size_t *len);
/* The end of the stream: *piece gets the text held back, and d starts a
 * new stream (as a new detokenizer would). */
TXLM_API txlm_status txlm_detokenizer_flush(txlm_detokenizer *d, const char **piece, size_t *len);
/* Starts a new stream, dropping the text held back. */
TXLM_API void txlm_detokenizer_reset(txlm_detokenizer *d);
TXLM_API void txlm_detokenizer_free(txlm_detokenizer *d);

/* ---- sessions -------------------------------------------------------- */

typedef struct txlm_session_options {
    uint32_t mem_len;     /* 0 = the model's */
    int32_t clamp_len;    /* 0 = the model's; -1 = no clamping */
    int same_length;      /* -1 = the model's, else 0/1 */
    uint32_t max_segment; /* longest segment fed at once; 0 = max(tgt_len, 512) */
    /* 1: HF transformers' start: a segment fed with no memory (the first,
     * or the first after a reset) finds mem_len rows of zeros (layer
     * inputs of 0) that every query attends to, as HF's init_mems gives,
     * sliding out as real rows come in. -1: an empty memory, as the
     * authors' PyTorch code, NVIDIA's and txlm's golden cases start. 0
     * (default): the model's (zero rows only for models packed from the
     * authors' TensorFlow checkpoints, whose evaluation starts so). */
    int zero_memory;
} txlm_session_options;

/* A session with empty memory (opts may be NULL: the model's settings).
 * On failure *out is NULL. */
TXLM_API txlm_status txlm_session_create(txlm_model *m, const txlm_session_options *opts, txlm_session **out);
/* NULL is ignored. */
TXLM_API void txlm_session_free(txlm_session *s);
/* Forget the memory: the next segment starts a new text. */
TXLM_API void txlm_session_reset(txlm_session *s);
/* Rows currently held in each layer's memory. */
TXLM_API uint32_t txlm_session_memory_len(const txlm_session *s);

/* Feeds one segment of n tokens (1..max_segment) through the model and
 * updates the memory. If logprobs is not NULL it receives [n, n_token]
 * float log-probabilities, row-major, rows in input order. */
TXLM_API txlm_status txlm_session_feed(txlm_session *s, const int32_t *tokens, uint32_t n, float *logprobs);

/* Feeds n tokens but returns log-probabilities only for rows [first_row, n)
 * (logprobs receives (n - first_row) x n_token floats). Generation feeds
 * with first_row = n - 1 or n (none). */
TXLM_API txlm_status txlm_session_feed_rows(txlm_session *s, const int32_t *tokens, uint32_t n, uint32_t first_row,
                                   float *logprobs);

/* Feeds n tokens and writes log p(targets[i] | tokens[0..i], memory) for
 * every position (the evaluation protocol: targets are the next tokens).
 * Computes the head and only the tail clusters that targets fall in. */
TXLM_API txlm_status txlm_session_score(txlm_session *s, const int32_t *tokens, const int32_t *targets, uint32_t n,
                               float *target_logprobs);

/* Feeds any number of tokens, in segments of at most max_segment, carrying
 * the memory, computing no log-probabilities (a prompt, a long context).
 * progress (may be NULL) is called after each segment; cancelling stops
 * between segments. *fed (may be NULL) receives the tokens fed: on success
 * n, on failure or cancel the memory holds exactly the first *fed tokens. */
TXLM_API txlm_status txlm_session_feed_long(txlm_session *s, const int32_t *tokens, size_t n, txlm_progress_fn progress,
                                   void *user, size_t *fed);
/* The same for text, tokenized with the model's tokenizer; *fed counts tokens. */
TXLM_API txlm_status txlm_session_feed_text(txlm_session *s, const char *text, size_t len, txlm_progress_fn progress,
                                   void *user, size_t *fed);

/* ---- saving and restoring a session ---------------------------------- */
/* A state holds the memory, the last output row and the sampler state. It
 * is versioned, checksummed and bound to the model: another model refuses
 * it. A restoring session needs mem_len >= the saved memory rows. */

/* Bytes the state has now (it grows with the memory rows held). */
TXLM_API size_t txlm_session_state_size(const txlm_session *s);
/* Writes the state into buf (cap bytes, at least txlm_session_state_size). */
TXLM_API txlm_status txlm_session_save(txlm_session *s, void *buf, size_t cap, size_t *written);
/* Replaces the session's state with a saved one; on failure the session is
 * left as it was, unless the device failed midway (then reset it). */
TXLM_API txlm_status txlm_session_restore(txlm_session *s, const void *buf, size_t size);
/* Written to a temporary file and renamed: a crash never leaves a torn state at path. */
TXLM_API txlm_status txlm_session_save_file(txlm_session *s, const char *path);
TXLM_API txlm_status txlm_session_restore_file(txlm_session *s, const char *path);

/* ---- looking inside: attention capture -------------------------------- */

typedef enum txlm_capture_mode {
    TXLM_CAPTURE_OFF = 0,
    TXLM_CAPTURE_PROBS = 1,  /* attention probabilities of every layer */
    TXLM_CAPTURE_TERMS = 2,  /* and the four score terms (a) q·k (b) q·W_R R (c) u·k (d) v·W_R R */
} txlm_capture_mode;

/* Keeps what the next feeds compute in attention (costs device memory:
 * per layer n_head x max_segment x (mem_len + max_segment) floats, x5 with terms). */
TXLM_API txlm_status txlm_session_capture_attention(txlm_session *s, txlm_capture_mode mode);

typedef struct txlm_attention_shape {
    uint32_t n_layer, n_head;
    uint32_t qlen;   /* queries: the last segment's tokens */
    uint32_t mlen;   /* memory rows the last segment saw */
    uint32_t klen;   /* keys: mlen + qlen (memory first) */
} txlm_attention_shape;

/* The last segment's captured attention of one layer: probs [n_head, qlen, klen]
 * (masked entries exactly 0) and, if not NULL and captured, terms [4, n_head, qlen, klen]
 * (unscaled; probs = softmax over unmasked keys of (a+b+c+d) / sqrt(d_head)).
 * Call with both NULL to learn the shape. */
TXLM_API txlm_status txlm_session_attention(txlm_session *s, uint32_t layer, float *probs, float *terms,
                                   txlm_attention_shape *shape);

/* ---- sampling -------------------------------------------------------- */

typedef struct txlm_sampling {
    float temperature;   /* 1 = the model's distribution; <= 0 = greedy (argmax); NaN or infinite: refused */
    uint32_t top_k;      /* keep the k most likely tokens; 0 = off; above the vocabulary's size: refused */
    float top_p;         /* keep the smallest set with this much probability; 0 or 1 = off; outside [0, 1]: refused */
} txlm_sampling;

/* llama.cpp's repetition penalty, applied before temperature and filters:
 * the log-probability l of each distinct token among tokens[0..n) becomes
 * l / penalty if l > 0, else l * penalty (log-probabilities are <= 0, so a
 * penalty > 1 makes those tokens less likely). penalty 0 or 1 = off;
 * negative, NaN or infinite: refused. The tokens (the window, e.g. the
 * last 64 fed) must be in the vocabulary. */
typedef struct txlm_repeat_penalty {
    float penalty;
    const int32_t *tokens;
    uint32_t n;
} txlm_repeat_penalty;

/* Seeds the session's sampler (same seed, same draws). */
TXLM_API void txlm_session_set_seed(txlm_session *s, uint64_t seed);
/* Draws the token that follows the last token fed. At temperature 1 with
 * no top-k/top-p the draw is hierarchical (head, then one tail cluster)
 * and exact; otherwise the full distribution of that position is used.
 * The token is NOT fed: feed it to continue. */
TXLM_API txlm_status txlm_session_sample(txlm_session *s, const txlm_sampling *opts, int32_t *token);
/* The same with a repetition penalty (penalty may be NULL: none). */
TXLM_API txlm_status txlm_session_sample_penalized(txlm_session *s, const txlm_sampling *opts,
                                                   const txlm_repeat_penalty *penalty, int32_t *token);

/* Draws and feeds up to n tokens (the loop of sample, then feed), writing
 * them to tokens[0..n). opts and penalty may be NULL (temperature 1, no
 * penalty). progress (may be NULL) is called after each token is written
 * and fed, so it can print tokens[made - 1] as it comes; returning
 * non-zero stops with TXLM_ERR_CANCELLED. *made (may be NULL) receives the
 * tokens drawn and fed, on success n. With a penalty its window slides:
 * penalty->tokens followed by the tokens drawn so far, the last penalty->n. */
TXLM_API txlm_status txlm_session_generate(txlm_session *s, const txlm_sampling *opts, const txlm_repeat_penalty *penalty,
                                           size_t n, int32_t *tokens, txlm_progress_fn progress, void *user,
                                           size_t *made);

/* ---- the next token's distribution, without feeding again ------------ */

/* The log-probabilities of every token following the last token fed
 * (n_token floats into logprobs); the memory and the sampler are unchanged. */
TXLM_API txlm_status txlm_session_next_logprobs(txlm_session *s, float *logprobs);
/* The k most likely next tokens, most likely first (ties: lower id first):
 * ids[k] and logprobs[k]; k must be 1..n_token. */
TXLM_API txlm_status txlm_session_next_top_k(txlm_session *s, uint32_t k, int32_t *ids, float *logprobs);

/* ---- scoring any length, with progress ------------------------------- */

/* txlm_session_score for any n, in segments of at most max_segment, the
 * memory carried; progress after each segment, cancelling between them.
 * *done (may be NULL) receives the positions scored: the memory holds
 * exactly those tokens, and target_logprobs[0..*done) are written. */
TXLM_API txlm_status txlm_session_score_long(txlm_session *s, const int32_t *tokens, const int32_t *targets, size_t n,
                                             float *target_logprobs, txlm_progress_fn progress, void *user,
                                             size_t *done);

/* ---- several streams in one pass ------------------------------------- */
/* A batch feeds one segment to each of several sessions of one model in
 * one submission: the embedding, the projections, the feed-forward and the
 * output layer run once over the rows of all streams (a product over many
 * rows instead of one per stream), attention per stream over its own
 * memory. Each session keeps its own memory ring, fill, segment length
 * (ragged lengths are fine), sampler and last output row, so it can go on
 * alone or in another batch. Results per stream equal feeding each session
 * alone to within 1e-5: a product over more rows may use another kernel,
 * which adds in another order (docs/batching.md); a batch of one gives
 * the single-session results to the bit. A batch is used by one thread
 * at a time; its sessions may not be in another call meanwhile. */
typedef struct txlm_batch txlm_batch;

/* Device memory of a batch of sessions, per stream and shared. */
typedef struct txlm_batch_sizes {
    uint64_t stream_ring_bytes;    /* per stream: every layer's ring of memory keys and values, and position keys */
    uint64_t stream_scratch_bytes; /* per stream: the rest of a session fed only in batches (its last output row) */
    uint64_t batch_bytes;          /* the batch's row buffers and scratch for all streams' rows together */
    uint64_t total_bytes;          /* streams x (ring + scratch) + batch */
    uint64_t available_bytes;      /* free for them now: the context's budget left, else the device heaps less what is allocated */
} txlm_batch_sizes;

/* What a batch of `streams` sessions created with opts (NULL: the model's
 * settings) would allocate, computed without allocating anything. */
TXLM_API txlm_status txlm_batch_plan(const txlm_model *m, uint32_t streams, const txlm_session_options *opts,
                                     txlm_batch_sizes *out);
/* A batch for up to max_streams sessions whose max_segment is at most
 * opts' (NULL: the model's settings). Refused with TXLM_ERR_OUT_OF_MEMORY,
 * before anything is allocated, when its own buffers do not fit what is
 * available (txlm_batch_plan tells beforehand whether the sessions fit too). */
TXLM_API txlm_status txlm_batch_create(txlm_model *m, uint32_t max_streams, const txlm_session_options *opts,
                                       txlm_batch **out);
/* NULL is ignored. The sessions stay. */
TXLM_API void txlm_batch_free(txlm_batch *b);
/* The batch's own device memory (its sessions' not). */
TXLM_API txlm_status txlm_batch_memory(const txlm_batch *b, txlm_memory_use *out);

/* One stream's segment in a batch: txlm_session_feed_rows (logprobs) or
 * txlm_session_score (targets and target_logprobs, rows from first_row),
 * or neither (no output). */
typedef struct txlm_stream_feed {
    txlm_session *session;
    const int32_t *tokens;
    uint32_t n;                /* 1..the session's max_segment and the batch's */
    uint32_t first_row;        /* output for rows [first_row, n) */
    float *logprobs;           /* (n - first_row) x n_token floats, or NULL */
    const int32_t *targets;    /* n - first_row tokens to score, or NULL */
    float *target_logprobs;    /* receives log p(target) per row */
} txlm_stream_feed;

/* Feeds feeds[0..n) (1..max_streams of them, each a different session of
 * the batch's model) in one pass. Arguments are checked first: a refused
 * call changes no session. If the device fails midway every session's
 * memory is forgotten (as txlm_session_reset). If a stream's output is
 * NaN or infinite, the call fails with TXLM_ERR_NONFINITE naming the
 * first such stream ("stream i: ..."): that stream's memory is forgotten
 * (as alone), the others' memory moved on and their outputs are written. */
TXLM_API txlm_status txlm_batch_feed(txlm_batch *b, const txlm_stream_feed *feeds, uint32_t n);
/* Draws the next token of each of sessions[0..n) as txlm_session_sample_penalized
 * does, each with its own sampler, the output layer run once for all of
 * them. penalties is NULL or n entries (each may be NULL). Tokens are not
 * fed. A stream whose distribution is not finite gets token -1 and the
 * call fails naming the first such stream; the others are drawn. */
TXLM_API txlm_status txlm_batch_sample(txlm_batch *b, txlm_session *const *sessions, uint32_t n,
                                       const txlm_sampling *opts, const txlm_repeat_penalty *const *penalties,
                                       int32_t *tokens);
/* The log-probabilities of every token following each session's last
 * token fed, as txlm_session_next_logprobs gives them, into logprobs
 * (n x n_token floats, session i's from i x n_token), the output layer
 * run in the batch's workspace: the sessions build no workspace of their
 * own (txlm_session_next_logprobs' first call on a session does, which
 * txlm_batch_plan does not count). Memories and samplers are unchanged.
 * A session never fed is refused before any work; one whose distribution
 * is not finite fails the call naming it ("stream i: ..."), the others'
 * rows are written. */
TXLM_API txlm_status txlm_batch_next_logprobs(txlm_batch *b, txlm_session *const *sessions, uint32_t n,
                                              float *logprobs);
/* The stream the batch's last txlm_batch_feed, txlm_batch_sample or
 * txlm_batch_next_logprobs failed on: its index in that call (the one the
 * message names, "stream i: ...": the first stream whose output was not
 * finite, or whose argument was refused), or -1 when that call succeeded
 * or its failure was no one stream's (the device, the call's own
 * arguments). A feed that fails naming stream i with TXLM_ERR_NONFINITE
 * has moved every other stream's memory on. */
TXLM_API int32_t txlm_batch_failed_stream(const txlm_batch *b);

/* ---- stop sequences --------------------------------------------------- */
/* Text filtered through a set of stop strings, for streamed generation:
 * push each piece (a detokenizer's), print what comes out. Text that may
 * be the start of a stop string is held back until it is certain; once a
 * stop string is complete, the text before it is the last out, *stopped
 * becomes 1 and later pushes give nothing. The pieces out, and flush's,
 * put together are the text pushed up to the first occurrence of any stop
 * string (all of it when none occurs). */
typedef struct txlm_stopper txlm_stopper;
/* stops: n NUL-terminated strings, none empty (copied). */
TXLM_API txlm_status txlm_stopper_create(const char *const *stops, size_t n, txlm_stopper **out);
/* *piece (NUL-terminated, *len bytes; valid until the next call on st)
 * gets the text now known not to be part of a stop string. len and
 * stopped may be NULL. */
TXLM_API txlm_status txlm_stopper_push(txlm_stopper *st, const char *text, size_t n, const char **piece, size_t *len,
                                       int *stopped);
/* The end of the text: *piece gets what was held back (nothing after a
 * stop), and st starts over. */
TXLM_API txlm_status txlm_stopper_flush(txlm_stopper *st, const char **piece, size_t *len);
TXLM_API void txlm_stopper_reset(txlm_stopper *st);
TXLM_API void txlm_stopper_free(txlm_stopper *st);

#ifdef __cplusplus
}
#endif

#endif
