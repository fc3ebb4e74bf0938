/* Writes the small generated seeds of the fuzz corpora (the rest are cut
 * from tests/golden): tiny .txlm files of each vocabulary kind and dtype,
 * and safetensors files of each dtype. Run it after a format change:
 *   build/tests/fuzz/fuzz_gen_seeds tests/fuzz/corpus */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txlm_file.h"

static int write_txlm(const char *path, uint32_t kind, uint32_t dtype)
{
    txlm_hparams h;
    memset(&h, 0, sizeof h);
    h.n_token = kind == TXLM_TOK_WORD ? 6 : 4;
    h.d_model = 2, h.d_embed = 2, h.n_head = 1, h.d_head = 2, h.d_inner = 4, h.n_layer = 1, h.div_val = 1;
    h.mem_len = 4, h.tgt_len = 4, h.clamp_len = -1, h.layer_norm_epsilon = 1e-5f;
    if (kind == TXLM_TOK_WORD) h.n_cutoffs = 1, h.cutoffs[0] = 3;
    static const char word_blob[] = "<eos><unk>the\xc3\xa9t\xe2\x82\xac";
    static const uint32_t word_off[] = {0, 5, 10, 13, 15, 16, 19};
    static const char byte_blob[] = "a\x00\xff_";
    static const uint32_t byte_off[] = {0, 1, 2, 3, 4};
    txlm_vocab v = {.n = h.n_token, .kind = kind, .eos_id = -1, .unk_id = -1};
    if (kind == TXLM_TOK_WORD) {
        v.offsets = word_off, v.blob = word_blob, v.blob_size = 19, v.eos_id = 0, v.unk_id = 1;
        v.flags = TXLM_VOCAB_LOWER_CASE;
    } else {
        v.offsets = byte_off, v.blob = kind == TXLM_TOK_CHAR_BYTE ? byte_blob : "_abc", v.blob_size = 4;
    }
    txlm_writer *w;
    txlm_err err = {0, ""};
    if (txlm_writer_open(path, &w, &err) || txlm_writer_set_hparams(w, &h, &err) || txlm_writer_set_vocab(w, &v, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    static uint8_t data[3][256];
    for (int i = 0; i < 256; i++) data[0][i] = (uint8_t)(i * 7), data[1][i] = (uint8_t)(i * 13 + 1), data[2][i] = (uint8_t)i;
    uint64_t d1[1] = {2}, d2[2] = {2, 32};
    int rc = txlm_writer_add_tensor(w, "layers.0.pos_ff.layer_norm.bias", TXLM_DT_F32, 1, d1, data[0], 8, &err);
    uint64_t nb = txlm_tensor_nbytes(dtype, 2, d2, &err);
    if (!rc) rc = txlm_writer_add_tensor(w, "word_emb.emb_layers.0.weight", dtype, 2, d2, data[1], nb, &err);
    if (!rc) rc = txlm_writer_finish(w, &err);
    else txlm_writer_abort(w);
    if (rc) fprintf(stderr, "%s: %s\n", path, err.msg);
    return rc;
}

static int write_safetensors(const char *path, const char *dtype, unsigned esize)
{
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr,
                     "{\"__metadata__\":{\"format\":\"pt\"},\"a.weight\":{\"dtype\":\"%s\",\"shape\":[2,3],\"data_offsets\":[0,%u]},"
                     "\"b\":{\"dtype\":\"%s\",\"shape\":[4],\"data_offsets\":[%u,%u]},"
                     "\"e\":{\"dtype\":\"%s\",\"shape\":[0,2],\"data_offsets\":[%u,%u]}}  ",
                     dtype, 6 * esize, dtype, 6 * esize, 10 * esize, dtype, 10 * esize, 10 * esize);
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)n >> (8 * i));
    fwrite(len, 1, 8, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (unsigned i = 0; i < 10 * esize; i++) fputc((int)(i * 37 + 60) & 0xFF, f);
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR (writes CORPUS_DIR/txlm/* and CORPUS_DIR/safetensors/*)\n", argv[0]);
        return 2;
    }
    char path[4096];
    static const struct {
        const char *name;
        uint32_t kind, dtype;
    } tx[] = {{"word_f32", TXLM_TOK_WORD, TXLM_DT_F32},
              {"byte_f16", TXLM_TOK_CHAR_BYTE, TXLM_DT_F16},
              {"word_q8", TXLM_TOK_WORD, TXLM_DT_Q8_0},
              {"text8_q4", TXLM_TOK_CHAR_TEXT8, TXLM_DT_Q4_0}};
    int rc = 0;
    for (size_t i = 0; i < sizeof tx / sizeof tx[0]; i++) {
        snprintf(path, sizeof path, "%s/txlm/%s.txlm", argv[1], tx[i].name);
        rc |= write_txlm(path, tx[i].kind, tx[i].dtype);
    }
    static const struct {
        const char *dtype;
        unsigned esize;
    } st[] = {{"F32", 4}, {"F16", 2}, {"BF16", 2}};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        snprintf(path, sizeof path, "%s/safetensors/%s.safetensors", argv[1], st[i].dtype);
        rc |= write_safetensors(path, st[i].dtype, st[i].esize);
    }
    return rc;
}
