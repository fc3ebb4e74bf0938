/* config.json -> hparams: the golden configs, HF defaults, and one test
 * per kind of mistake, each checking the code and the key in the message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "pack.h"
#include "util.h"

static const char *golden;

static int parse(const char *json, txlm_hparams *h, txlm_err *err)
{
    memset(err, 0, sizeof *err);
    return txlm_config_parse_json(json, strlen(json), h, err);
}

/* A minimal valid config with one key replaced or added: `extra` is
 * spliced in before the required keys, which are skipped when extra
 * names them (JSON objects here never repeat a key). */
static int parse_with(const char *extra, txlm_hparams *h, txlm_err *err)
{
    static const char *const base[][2] = {
        {"n_token", "100"}, {"d_model", "16"}, {"n_head", "2"}, {"d_head", "8"}, {"d_inner", "32"}, {"n_layer", "2"},
    };
    char json[2048];
    size_t n = (size_t)snprintf(json, sizeof json, "{%s", extra);
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        char key[40];
        snprintf(key, sizeof key, "\"%s\"", base[i][0]);
        if (strstr(extra, key)) continue;
        int need_comma = json[n - 1] != '{' && json[n - 1] != ',';
        n += (size_t)snprintf(json + n, sizeof json - n, "%s%s: %s", need_comma ? ", " : " ", key, base[i][1]);
    }
    snprintf(json + n, sizeof json - n, "}");
    return parse(json, h, err);
}

static void test_golden(void)
{
    char path[1024];
    txlm_hparams h;
    txlm_err err = {0};

    snprintf(path, sizeof path, "%s/adaptive_word/config.json", golden);
    EXPECT_OK(txlm_config_load_json(path, &h, &err), &err);
    CHECK(h.n_token == 1000 && h.d_model == 64 && h.d_embed == 64 && h.n_head == 4 && h.d_head == 16);
    CHECK(h.d_inner == 128 && h.n_layer == 3 && h.div_val == 2);
    CHECK(h.n_cutoffs == 2 && h.cutoffs[0] == 200 && h.cutoffs[1] == 500);
    CHECK(h.tie_projs[0] == 0 && h.tie_projs[1] == 1 && h.tie_projs[2] == 1);
    CHECK(h.tie_weight == 1 && h.pre_lnorm == 0 && h.untie_r == 1 && h.same_length == 1);
    CHECK(h.clamp_len == 20 && h.mem_len == 16 && h.tgt_len == 8 && h.ext_len == 0 && h.attn_type == 0);
    CHECK(h.layer_norm_epsilon == 1e-5f);

    snprintf(path, sizeof path, "%s/char_preln/config.json", golden);
    EXPECT_OK(txlm_config_load_json(path, &h, &err), &err);
    CHECK(h.n_token == 204 && h.d_model == 48 && h.n_head == 3 && h.n_layer == 2 && h.div_val == 1);
    CHECK(h.n_cutoffs == 0 && h.tie_projs[0] == 0 && h.pre_lnorm == 1 && h.untie_r == 0);
    CHECK(h.same_length == 0 && h.clamp_len == -1 && h.mem_len == 12);

    snprintf(path, sizeof path, "%s/proj_clusters/config.json", golden);
    EXPECT_OK(txlm_config_load_json(path, &h, &err), &err);
    CHECK(h.n_token == 600 && h.d_model == 64 && h.d_embed == 32 && h.div_val == 1 && h.n_cutoffs == 2);
    CHECK(h.cutoffs[0] == 100 && h.cutoffs[1] == 300);

    EXPECT_ERR(txlm_config_load_json("/nonexistent/config.json", &h, &err), &err, TXLM_ERR_IO, "/nonexistent/config.json");
}

static void test_defaults(void)
{
    txlm_hparams h;
    txlm_err err;
    EXPECT_OK(parse_with("", &h, &err), &err);
    CHECK(h.n_token == 100 && h.d_model == 16 && h.d_embed == 16 && h.div_val == 1 && h.n_cutoffs == 0);
    CHECK(h.tie_weight == 1 && h.untie_r == 1 && h.pre_lnorm == 0 && h.same_length == 0 && h.clamp_len == -1);
    CHECK(h.ext_len == 0 && h.attn_type == 0 && h.layer_norm_epsilon == 1e-5f && h.tie_projs[0] == 0);

    /* vocab_size alone, or agreeing with n_token. */
    EXPECT_OK(parse("{\"vocab_size\": 50, \"d_model\": 16, \"n_head\": 2, \"d_head\": 8, \"d_inner\": 32, \"n_layer\": 1}",
                    &h, &err),
              &err);
    CHECK(h.n_token == 50);
    EXPECT_OK(parse_with("\"vocab_size\": 100,", &h, &err), &err);

    /* tie_projs follows proj_share_all_but_first unless given. */
    EXPECT_OK(parse_with("\"cutoffs\": [10, 50],", &h, &err), &err);
    CHECK(h.n_cutoffs == 2 && h.tie_projs[0] == 0 && h.tie_projs[1] == 1 && h.tie_projs[2] == 1);
    EXPECT_OK(parse_with("\"cutoffs\": [10, 50], \"proj_share_all_but_first\": false,", &h, &err), &err);
    CHECK(h.tie_projs[0] == 0 && h.tie_projs[1] == 0 && h.tie_projs[2] == 0);
    EXPECT_OK(parse_with("\"cutoffs\": [10, 50], \"tie_projs\": [true],", &h, &err), &err);
    CHECK(h.tie_projs[0] == 1 && h.tie_projs[1] == 0 && h.tie_projs[2] == 0);

    /* Keys the engine does not use are accepted whatever their type. */
    EXPECT_OK(parse_with("\"adaptive\": true, \"dropout\": 0.1, \"dropatt\": 0.0, \"init\": \"normal\", "
                         "\"sample_softmax\": -1, \"architectures\": [\"TransfoXLLMHeadModel\"], \"eos_token_id\": 0,",
                         &h, &err),
              &err);
    EXPECT_OK(parse_with("\"layer_norm_epsilon\": 1e-6, \"clamp_len\": 1000, \"same_length\": true, \"d_embed\": null,", &h,
                         &err),
              &err);
    CHECK(h.layer_norm_epsilon == 1e-6f && h.clamp_len == 1000 && h.same_length == 1 && h.d_embed == 16);
}

static void test_errors(void)
{
    txlm_hparams h;
    txlm_err err;
    /* Wrong types, each naming the key and what was expected. */
    EXPECT_ERR(parse_with("\"n_head\": \"2\",", &h, &err), &err, TXLM_ERR_FORMAT, "'n_head'", "expected an integer",
               "a string");
    EXPECT_ERR(parse_with("\"d_model\": -16,", &h, &err), &err, TXLM_ERR_FORMAT, "'d_model'", "-16", "out of range");
    EXPECT_ERR(parse_with("\"n_layer\": 2.5,", &h, &err), &err, TXLM_ERR_FORMAT, "'n_layer'", "expected an integer",
               "2.5");
    EXPECT_ERR(parse_with("\"d_inner\": 1e12,", &h, &err), &err, TXLM_ERR_FORMAT, "'d_inner'", "out of range");
    EXPECT_ERR(parse_with("\"tie_weight\": \"yes\",", &h, &err), &err, TXLM_ERR_FORMAT, "'tie_weight'",
               "expected a boolean");
    EXPECT_ERR(parse_with("\"pre_lnorm\": 2,", &h, &err), &err, TXLM_ERR_FORMAT, "'pre_lnorm'", "expected a boolean");
    EXPECT_ERR(parse_with("\"cutoffs\": 5,", &h, &err), &err, TXLM_ERR_FORMAT, "'cutoffs'", "expected an array");
    EXPECT_ERR(parse_with("\"cutoffs\": [10, \"x\"],", &h, &err), &err, TXLM_ERR_FORMAT, "'cutoffs[1]'");
    EXPECT_ERR(parse_with("\"cutoffs\": [10], \"tie_projs\": [false, 3],", &h, &err), &err, TXLM_ERR_FORMAT, "'tie_projs[1]'");
    EXPECT_ERR(parse_with("\"tie_projs\": [false, true],", &h, &err), &err, TXLM_ERR_FORMAT, "'tie_projs'", "2 entries");
    EXPECT_ERR(parse_with("\"layer_norm_epsilon\": \"1e-5\",", &h, &err), &err, TXLM_ERR_FORMAT, "'layer_norm_epsilon'");
    EXPECT_ERR(parse_with("\"clamp_len\": true,", &h, &err), &err, TXLM_ERR_FORMAT, "'clamp_len'");

    /* Missing and contradictory keys. */
    EXPECT_ERR(parse("{\"d_model\": 16, \"n_head\": 2, \"d_head\": 8, \"d_inner\": 32, \"n_layer\": 1}", &h, &err), &err,
               TXLM_ERR_FORMAT, "n_token");
    EXPECT_ERR(parse("{\"n_token\": 9, \"d_model\": 16, \"d_head\": 8, \"d_inner\": 32, \"n_layer\": 1}", &h, &err), &err,
               TXLM_ERR_FORMAT, "'n_head'", "missing");
    EXPECT_ERR(parse_with("\"vocab_size\": 99,", &h, &err), &err, TXLM_ERR_FORMAT, "n_token 100", "vocab_size 99");
    EXPECT_ERR(parse_with("\"n_layer\": 2, \"n_layer\": 3,", &h, &err), &err, TXLM_ERR_FORMAT, "'n_layer'", "more than once");

    /* Well-formed but not what the engine runs. */
    EXPECT_ERR(parse_with("\"attn_type\": 1,", &h, &err), &err, TXLM_ERR_UNSUPPORTED, "attn_type 1");
    EXPECT_ERR(parse_with("\"ext_len\": 4,", &h, &err), &err, TXLM_ERR_UNSUPPORTED, "ext_len 4");
    EXPECT_ERR(parse_with("\"sample_softmax\": 8000,", &h, &err), &err, TXLM_ERR_UNSUPPORTED, "sample_softmax");
    EXPECT_ERR(parse_with("\"cutoffs\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],", &h, &err), &err, TXLM_ERR_UNSUPPORTED,
               "'cutoffs'", "16 cutoffs");

    /* Values hparams validation refuses. */
    EXPECT_ERR(parse_with("\"d_model\": 0,", &h, &err), &err, TXLM_ERR_FORMAT, "d_model");
    EXPECT_ERR(parse_with("\"cutoffs\": [50, 20],", &h, &err), &err, TXLM_ERR_FORMAT, "cutoffs");
    EXPECT_ERR(parse_with("\"cutoffs\": [20, 100],", &h, &err), &err, TXLM_ERR_FORMAT, "cutoffs");
    EXPECT_ERR(parse_with("\"div_val\": 4, \"d_embed\": 16, \"cutoffs\": [10, 20, 30],", &h, &err), &err,
               TXLM_ERR_FORMAT, "cluster 3");
    EXPECT_ERR(parse_with("\"layer_norm_epsilon\": 0,", &h, &err), &err, TXLM_ERR_FORMAT, "layer_norm_epsilon");

    /* Not a config at all. */
    EXPECT_ERR(parse("", &h, &err), &err, TXLM_ERR_FORMAT, "not valid JSON");
    EXPECT_ERR(parse("{\"n_token\": 5,}", &h, &err), &err, TXLM_ERR_FORMAT, "not valid JSON");
    EXPECT_ERR(parse("[1]", &h, &err), &err, TXLM_ERR_FORMAT, "not a JSON object");
    EXPECT_ERR(parse("{} {}", &h, &err), &err, TXLM_ERR_FORMAT, "not valid JSON");
    EXPECT_ERR(txlm_config_parse_json("{\"a\":\0}", 7, &h, &err), &err, TXLM_ERR_FORMAT, "NUL");
}

/* HF v4's keys and defaults, and the notes txlm-pack prints. */
static void test_hf_v4(void)
{
    txlm_hparams h;
    txlm_err err = {0};
    EXPECT_OK(parse_with("\"tie_word_embeddings\": false,", &h, &err), &err);
    CHECK(h.tie_weight == 0);
    EXPECT_OK(parse_with("\"tie_word_embeddings\": true, \"tie_weight\": true,", &h, &err), &err);
    CHECK(h.tie_weight == 1);
    EXPECT_ERR(parse_with("\"tie_word_embeddings\": false, \"tie_weight\": true,", &h, &err), &err, TXLM_ERR_FORMAT,
               "tie_weight (true) and tie_word_embeddings (false) disagree");

    /* without the notes (the library's parse): the old defaults */
    EXPECT_OK(parse_with("", &h, &err), &err);
    CHECK(h.mem_len == 0 && h.tgt_len == 0 && h.clamp_len == -1 && h.same_length == 0);
    const char *path = tmp_path("v4.json");
    static const char v4[] = "{\"vocab_size\": 100, \"d_model\": 16, \"n_head\": 2, \"d_head\": 8, \"d_inner\": 32, "
                             "\"n_layer\": 2, \"cutofs\": [10], \"architectures\": [\"TransfoXLLMHeadModel\"], "
                             "\"transformers_version\": \"4.30.2\", \"dropout\": 0.1, \"frobnicate\": 1}";
    write_file(path, v4, sizeof v4 - 1);
    txlm_config_notes notes = {.hf_defaults = 1};
    EXPECT_OK(txlm_config_load_json_notes(path, &h, &notes, &err), &err);
    CHECK(h.mem_len == 1600 && h.tgt_len == 128 && h.clamp_len == 1000 && h.same_length == 1 && h.n_cutoffs == 0);
    CHECK(strstr(notes.text, "mem_len not given: HF's default 1600") && strstr(notes.text, "tgt_len not given: HF's default 128"));
    CHECK(strstr(notes.text, "clamp_len not given: HF's default 1000") && strstr(notes.text, "same_length not given: HF's default true"));
    CHECK(strstr(notes.text, "2 keys txlm does not know") && strstr(notes.text, "'cutofs', 'frobnicate'"));
    CHECK(!strstr(notes.text, "'dropout'") && !strstr(notes.text, "'architectures'"));
    /* given keys are kept, and a config with nothing unknown says nothing of it */
    static const char full[] = "{\"n_token\": 100, \"d_model\": 16, \"n_head\": 2, \"d_head\": 8, \"d_inner\": 32, "
                               "\"n_layer\": 2, \"mem_len\": 0, \"tgt_len\": 4, \"clamp_len\": -1, \"same_length\": false}";
    write_file(path, full, sizeof full - 1);
    EXPECT_OK(txlm_config_load_json_notes(path, &h, &notes, &err), &err);
    CHECK(h.mem_len == 0 && h.tgt_len == 4 && h.clamp_len == -1 && h.same_length == 0 && notes.text[0] == 0);
    tmp_cleanup();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    golden = argv[1];
    test_golden();
    test_defaults();
    test_errors();
    test_hf_v4();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
