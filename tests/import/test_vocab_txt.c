/* vocab.txt: line i is symbol i, bytes kept exactly, special ids found,
 * and bad files refused naming the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "pack.h"
#include "vocab_txt.h"
#include "util.h"

static int load(const char *text, size_t len, txlm_vocab_buf *v, txlm_err *err)
{
    const char *path = tmp_path("vocab.txt");
    write_file(path, text, len);
    memset(err, 0, sizeof *err);
    return txlm_vocab_load_txt(path, v, err);
}

#define LOAD(lit, v, err) load((lit), sizeof(lit) - 1, (v), (err))

static int sym_is(const txlm_vocab *v, uint32_t i, const char *s)
{
    uint32_t len;
    const char *p = txlm_vocab_sym(v, i, &len);
    return len == strlen(s) && memcmp(p, s, len) == 0;
}

static void test_golden(const char *golden)
{
    static const char *const cases[] = {"adaptive_word", "char_preln", "proj_clusters"};
    static const uint32_t sizes[] = {1000, 204, 600};
    for (int c = 0; c < 3; c++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/vocab.txt", golden, cases[c]);
        size_t len;
        char *text = read_file(path, &len);
        CHECK(text != NULL);
        if (!text) continue;
        txlm_vocab_buf v;
        txlm_err err = {0};
        EXPECT_OK(txlm_vocab_load_txt(path, &v, &err), &err);
        CHECK(v.v.n == sizes[c]);
        CHECK(v.v.kind == TXLM_TOK_WORD && v.v.flags == 0);
        CHECK(v.v.eos_id == 0 && v.v.unk_id == 1);
        CHECK(v.v.offsets == v.offsets && v.v.blob == v.blob && v.v.offsets[0] == 0 && v.v.offsets[v.v.n] == v.v.blob_size);
        /* Every line, in order, equals its symbol. */
        uint32_t i = 0;
        for (char *line = text, *nl; i < v.v.n && (nl = memchr(line, '\n', len - (size_t)(line - text))); line = nl + 1, i++) {
            uint32_t sl;
            const char *s = txlm_vocab_sym(&v.v, i, &sl);
            CHECK(sl == (uint32_t)(nl - line) && memcmp(s, line, sl) == 0);
        }
        CHECK(i == v.v.n);
        txlm_vocab_buf_free(&v);
        CHECK(v.offsets == NULL && v.blob == NULL);
        free(text);
    }
}

static void test_forms(void)
{
    txlm_vocab_buf v;
    txlm_err err;
    /* No final line feed; a "\r" before the line feed is a line end, inner spaces are part of the symbol; UTF-8 kept. */
    EXPECT_OK(LOAD("a\nb\r\n<unk>\nd e\n\xc3\xa9t\xc3\xa9", &v, &err), &err);
    CHECK(v.v.n == 5);
    CHECK(sym_is(&v.v, 0, "a") && sym_is(&v.v, 1, "b") && sym_is(&v.v, 2, "<unk>") && sym_is(&v.v, 3, "d e"));
    CHECK(sym_is(&v.v, 4, "\xc3\xa9t\xc3\xa9"));
    CHECK(v.v.eos_id == -1 && v.v.unk_id == 2);
    txlm_vocab_buf_free(&v);

    EXPECT_OK(LOAD("x\n<eos>\n", &v, &err), &err);
    CHECK(v.v.n == 2 && v.v.eos_id == 1 && v.v.unk_id == -1);
    txlm_vocab_buf_free(&v);

    /* Symbols that share a prefix are different symbols. */
    EXPECT_OK(LOAD("ab\na\nabc\nb\n", &v, &err), &err);
    CHECK(v.v.n == 4 && sym_is(&v.v, 2, "abc"));
    txlm_vocab_buf_free(&v);
}

/* CRLF line ends and a UTF-8 byte-order mark: removed, and said so. */
static void test_line_ends(void)
{
    txlm_vocab_buf v;
    txlm_err err = {0};
    char note[256];
    static const char crlf[] = "\xef\xbb\xbf<eos>\r\n<unk>\r\nw2\r\nw\r3\r\nlast\r";
    const char *path = tmp_path("vocab.txt");
    write_file(path, crlf, sizeof crlf - 1);
    EXPECT_OK(txlm_vocab_load_txt_noted(path, &v, note, sizeof note, &err), &err);
    CHECK(v.v.n == 5 && v.v.eos_id == 0 && v.v.unk_id == 1);
    CHECK(sym_is(&v.v, 0, "<eos>") && sym_is(&v.v, 2, "w2") && sym_is(&v.v, 3, "w\r3") && sym_is(&v.v, 4, "last"));
    CHECK(strstr(note, "byte-order mark") && strstr(note, "5 lines") && strstr(note, "vocab.txt"));
    txlm_vocab_buf_free(&v);

    static const char bom[] = "\xef\xbb\xbf<eos>\nb\n";
    write_file(path, bom, sizeof bom - 1);
    EXPECT_OK(txlm_vocab_load_txt_noted(path, &v, note, sizeof note, &err), &err);
    CHECK(v.v.n == 2 && v.v.eos_id == 0 && sym_is(&v.v, 0, "<eos>"));
    CHECK(strstr(note, "byte-order mark") && !strstr(note, "carriage"));
    txlm_vocab_buf_free(&v);

    static const char plain[] = "<eos>\nb\n";
    write_file(path, plain, sizeof plain - 1);
    EXPECT_OK(txlm_vocab_load_txt_noted(path, &v, note, sizeof note, &err), &err);
    CHECK(v.v.n == 2 && note[0] == 0);
    txlm_vocab_buf_free(&v);
    /* a byte-order mark anywhere else is an ordinary character */
    EXPECT_OK(LOAD("a\n\xef\xbb\xbf" "b\n", &v, &err), &err);
    CHECK(sym_is(&v.v, 1, "\xef\xbb\xbf" "b"));
    txlm_vocab_buf_free(&v);
}

static void test_errors(void)
{
    txlm_vocab_buf v;
    txlm_err err;
    EXPECT_ERR(LOAD("a\nb\na\n", &v, &err), &err, TXLM_ERR_FORMAT, "'a'", "lines 1 and 3");
    EXPECT_ERR(LOAD("a\nb\nc\nd\nb", &v, &err), &err, TXLM_ERR_FORMAT, "'b'", "lines 2 and 5");
    EXPECT_ERR(LOAD("a\n\nb\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 2", "empty");
    EXPECT_ERR(LOAD("a\nb\n\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 3", "empty");
    EXPECT_ERR(LOAD("a\nb\xff\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 2", "UTF-8", "byte offset 3");
    EXPECT_ERR(LOAD("a\n\xc0\xaf\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 2", "UTF-8");
    EXPECT_ERR(LOAD("a\n\xed\xa0\x80\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 2", "UTF-8");
    EXPECT_ERR(LOAD("", &v, &err), &err, TXLM_ERR_FORMAT, "no symbols");
    /* A NUL byte would make "w4\0" a symbol that hides the real w4 from the tokenizer. */
    EXPECT_ERR(LOAD("<eos>\n<unk>\nw2\nw4\0\nw4\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 4", "NUL", "byte 2");
    EXPECT_ERR(LOAD("a\n\0\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 2", "NUL");
    /* Line ends are removed before symbols are compared: "a\r" is "a". */
    EXPECT_ERR(LOAD("a\r\nb\r\na\n", &v, &err), &err, TXLM_ERR_FORMAT, "'a'", "lines 1 and 3");
    EXPECT_ERR(LOAD("a\r\n\r\nb\r\n", &v, &err), &err, TXLM_ERR_FORMAT, "line 2", "empty");
    EXPECT_ERR(LOAD("\xef\xbb\xbf", &v, &err), &err, TXLM_ERR_FORMAT, "no symbols");
    CHECK(v.offsets == NULL && v.blob == NULL);
    EXPECT_ERR(txlm_vocab_load_txt(tmp_path("missing.txt"), &v, &err), &err, TXLM_ERR_IO, "missing.txt");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    test_golden(argv[1]);
    test_forms();
    test_line_ends();
    test_errors();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
