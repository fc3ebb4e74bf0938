/* Pickle reader: whatever it builds can be walked (the walk is bounded:
 * memo references can make a value contain itself), and every tensor it
 * made names a storage. */
#include "fuzz.h"
#include "pickle.h"

static void walk(const txlm_pk_value *v, int depth, uint32_t *budget)
{
    if (!v || depth > 32 || *budget == 0) return;
    --*budget;
    fuzz_require(txlm_pk_kind_name(v->kind) != NULL, "a kind name");
    if (v->kind == TXLM_PK_STR) {
        volatile char c = v->u.str.len ? v->u.str.s[v->u.str.len - 1] : 0;
        (void)c;
    } else if (v->kind == TXLM_PK_TUPLE || v->kind == TXLM_PK_LIST || v->kind == TXLM_PK_DICT) {
        for (uint32_t i = 0; i < v->n; i++) walk(v->u.seq.items[i], depth + 1, budget);
        if (v->kind == TXLM_PK_DICT) (void)txlm_pk_dict_get(v, "idx2sym");
    } else if (v->kind == TXLM_PK_OBJECT) {
        char d[240];
        fuzz_require(v->u.obj.cls && v->u.obj.cls->kind == TXLM_PK_CLASS, "a record names its class");
        fuzz_require(txlm_pk_describe(v, d, sizeof d)[0] != 0, "a record describes itself");
        walk(v->u.obj.args, depth + 1, budget);
        walk(v->u.obj.state, depth + 1, budget);
        (void)txlm_pk_attr(v, "_modules");
        (void)txlm_pk_vocab_attrs(v);
    } else if (v->kind == TXLM_PK_TENSOR) {
        fuzz_require(v->u.tensor.storage && v->u.tensor.storage->kind == TXLM_PK_STORAGE, "a tensor names a storage");
        fuzz_require(v->u.tensor.rank <= TXLM_PK_MAX_RANK, "tensor rank within the cap");
    }
}

static int count(void *user, const txlm_pk_value *v)
{
    (void)v;
    ++*(uint32_t *)user;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    txlm_pickle *p = NULL;
    const txlm_pk_value *root = NULL;
    uint64_t used = 0;
    txlm_err err = {0, ""};
    int rc = txlm_pickle_parse("pickle", data, size, 0, &p, &root, &used, &err);
    if (rc) {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
        txlm_pickle_free(p);
        return 0;
    }
    fuzz_require(used <= size && root != NULL, "consumed bytes inside the input");
    uint32_t budget = 100000, n = 0;
    walk(root, 0, &budget);
    txlm_pickle_each(p, TXLM_PK_TENSOR, count, &n);
    txlm_pickle_free(p);
    return 0;
}
