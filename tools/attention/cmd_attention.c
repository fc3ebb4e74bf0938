/* txlm attention: pictures (and dumps) of what the model attends to in the
 * last segment of a text. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attn.h"
#include "cli.h"
#include "cli_files.h"

static void usage(void)
{
    printf(
        "usage: txlm attention -m MODEL (-p TEXT | -f FILE | --tokens 3,17,...) [-o OUT.png]\n"
        "                      [--layer L|last|all] [--head H|all|mean] [--terms] [--by-distance]\n"
        "                      [--segment-len N] [--cell PX] [--tick N] [--grid-cols C]\n"
        "                      [--csv F] [--f32 F] [--mem-len M] [--clamp-len C] [--same-length 0|1] [--no-verify]\n"
        "                      [--binary-ok]\n\n"
        "Feeds the text through ONE session in segments of N tokens (--segment-len N, also spelt --tgt-len N\n"
        "as in eval; default: the model's tgt_len), carrying the memory, and shows the attention of the LAST\n"
        "segment: rows are its queries, columns the keys (the memory first, then the segment; a black line\n"
        "between them); numbers are positions in the text.\n"
        "Defaults: --layer all --head mean. 'all' gives one panel per layer or head (a layer per grid row\n"
        "when both are 'all'); 'mean' averages each matrix over the heads.\n\n"
        "  --terms        also capture the four unscaled score terms (a) q.k (b) q.W_R R (c) u.k (d) v.W_R R:\n"
        "                 five panels per layer/head, the terms on a blue-white-red scale shared by the four\n"
        "                 (probabilities = softmax over unmasked keys of (a+b+c+d)/sqrt(d_head))\n"
        "  --by-distance  instead of heatmaps, a chart of the probability averaged over queries against the\n"
        "                 distance query - key, one line per head, one panel per layer\n"
        "  --cell PX      pixels per matrix entry (default: 640 / longest side, 1..16); token strings are\n"
        "                 drawn along the axes from 8 up\n"
        "  --tick N       a numbered tick every N positions (default: as dense as the numbers fit)\n"
        "  --grid-cols C  panels per row of the picture (default: about square)\n"
        "Masked entries (the causal mask, and same_length's) are grey.\n\n"
        "Dumps (the selected layers and heads; with --terms, five matrices each):\n"
        "  --f32 F  little-endian float32 [slices][matrices][qlen][klen], row-major: slices in order of\n"
        "           layer, then head (one slice per layer for 'mean'); matrices (a) (b) (c) (d) probs with\n"
        "           --terms, else probs; key index k is text position first_query - mlen + k\n"
        "  --csv F  a header line, then layer,head,matrix,query,key,query_pos,key_pos,distance,masked,value\n"
        "           per entry (head is a number or 'mean', matrix one of a b c d probs, query/key matrix\n"
        "           indices, *_pos text positions, distance = mlen + query - key)\n\n"
        "Any output may be \"-\", standard output (one of them; a PNG or float32 never to a terminal). No\n"
        "output may be the model, the -f FILE or another output; all are checked before the model loads.\n"
        "A FILE that is plainly not text (a NUL byte, or mostly not UTF-8, in its first 4 KiB) is refused\n"
        "before the model loads; --binary-ok reads it.\n");
}

typedef struct opts {
    const char *model, *text, *file, *tokens, *out, *csv, *f32;
    int layer, head, terms, by_distance, no_verify, binary_ok;
    uint32_t seg_len;
    attn_figure_opts fig;
    txlm_session_options so;
    int slot[3];  /* -o, --f32, --csv: their index in the command's cli_files (-1: not given) */
} opts;

/* "all", "mean" (when allowed) or an index below `count` (checked later). */
static int parse_pick(const char *v, const char *flag, int allow_mean, int *out)
{
    if (!strcmp(v, "all")) return *out = ATTN_ALL, 0;
    if (!allow_mean && !strcmp(v, "last")) return *out = ATTN_LAST_LAYER, 0;
    if (allow_mean && !strcmp(v, "mean")) return *out = ATTN_MEAN, 0;
    uint32_t x;
    if (cli_parse_u32(v, flag, &x)) return 1;
    *out = (int)x;
    return 0;
}

static const char *const attention_flags[] = {"-m", "--model", "-p", "--prompt", "-f", "--file", "--tokens", "-o", "--output", "--csv", "--f32", "--layer", "--head", "--segment-len", "--tgt-len", "--cell", "--tick", "--grid-cols", NULL};

static int parse(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--terms")) { o->terms = 1; continue; }
        if (!strcmp(a, "--by-distance")) { o->by_distance = 1; continue; }
        if (!strcmp(a, "--no-verify")) { o->no_verify = 1; continue; }
        if (!strcmp(a, "--binary-ok")) { o->binary_ok = 1; continue; }
        if (!(v = cli_option_value(argc, argv, &i, "attention", attention_flags))) return 1;
        uint32_t u;
        int r;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) { if (cli_set_once(&o->model, v, a)) return 1; }
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) o->text = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) o->file = v;
        else if (!strcmp(a, "--tokens")) o->tokens = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) o->out = v;
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--f32")) o->f32 = v;
        else if (!strcmp(a, "--layer")) { if (parse_pick(v, a, 0, &o->layer)) return 1; }
        else if (!strcmp(a, "--head")) { if (parse_pick(v, a, 1, &o->head)) return 1; }
        else if (!strcmp(a, "--segment-len") || !strcmp(a, "--tgt-len")) { if (cli_parse_u32(v, a, &o->seg_len)) return 1; }
        else if (!strcmp(a, "--cell")) { if (cli_parse_u32(v, a, &u)) return 1; o->fig.cell = (int)u; }
        else if (!strcmp(a, "--tick")) { if (cli_parse_u32(v, a, &u)) return 1; o->fig.tick = (int)u; }
        else if (!strcmp(a, "--grid-cols")) { if (cli_parse_u32(v, a, &u)) return 1; o->fig.grid_cols = (int)u; }
        else if ((r = cli_session_option(a, v, &o->so)) >= 0) { if (r) return 1; }
        else return cli_error("attention: unknown option \"%s\" (see txlm attention --help)", a);
    }
    if (!o->model) return cli_error("attention: -m MODEL is required");
    if (!!o->text + !!o->file + !!o->tokens != 1) return cli_error("attention: give exactly one of -p TEXT, -f FILE, --tokens");
    if (!o->out && !o->csv && !o->f32) return cli_error("attention: nothing to write (give -o OUT.png, --csv or --f32)");
    if (o->terms && o->by_distance) return cli_error("attention: --terms and --by-distance do not combine");
    const char *ext = o->out ? strrchr(o->out, '.') : NULL;
    if (ext && !strchr(ext, '/') && strcasecmp(ext, ".png"))
        return cli_error("attention: -o %s: the picture is a PNG; name it .png", o->out);
    if (o->fig.cell > 64) return cli_error("--cell %d: at most 64", o->fig.cell);
    if (o->seg_len > (1u << 20)) return cli_error("--segment-len %u: at most %u", o->seg_len, 1u << 20);
    o->fig.terms = o->terms;
    return 0;
}

/* text: the -f FILE's bytes, read before the model was. */
static int read_tokens(txlm_model *m, const opts *o, const char *text, size_t len, int32_t **ids, uint32_t *n)
{
    if (o->tokens) return cli_parse_list(o->tokens, ids, n, "--tokens");
    if (o->file) return cli_tokenize(m, text, len, o->file, ids, n);
    return cli_tokenize(m, o->text, strlen(o->text), "-p TEXT", ids, n);
}

/* io: the outputs opened; o->slot: where -o, --f32 and --csv are in it. */
static int produce(txlm_model *m, const opts *o, const int32_t *ids, uint32_t n, cli_files *io)
{
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    int layer = o->layer == ATTN_LAST_LAYER ? (int)p.n_layer - 1 : o->layer;
    if (layer >= 0 && (uint32_t)layer >= p.n_layer)
        return cli_error("--layer %d: the model has %u layers (0..%u)", layer, p.n_layer, p.n_layer - 1);
    if (o->head >= 0 && (uint32_t)o->head >= p.n_head)
        return cli_error("--head %d: the model has %u heads (0..%u)", o->head, p.n_head, p.n_head - 1);
    uint32_t seg_len = o->seg_len ? o->seg_len : p.tgt_len ? p.tgt_len : 128;

    attn_run r;
    if (attn_run_tokens(m, &o->so, ids, n, seg_len, o->terms, &r)) return 1;
    attn_slice *s = NULL;
    uint32_t ns = 0;
    int rc = attn_select(&r, layer, o->head, &s, &ns);
    void *data[3] = {NULL, NULL, NULL};
    size_t sizes[3] = {0, 0, 0};
    if (!rc && o->out) {
        plot_canvas c = {0};
        attn_figure_opts fig = o->fig;
        if (!fig.grid_cols && o->layer == ATTN_ALL && o->head == ATTN_ALL) fig.grid_cols = (int)p.n_head;
        rc = o->by_distance ? attn_draw_distance(&r, s, ns, &c) : attn_draw_heatmaps(&r, s, ns, &fig, &c);
        if (!rc && !(data[0] = plot_png_encode(&c, &sizes[0]))) rc = cli_error("out of memory encoding the PNG");
        plot_canvas_free(&c);
    }
    if (!rc && o->f32) rc = attn_dump_f32(&r, s, ns, o->terms, &data[1], &sizes[1]);
    if (!rc && o->csv) rc = attn_dump_csv(&r, s, ns, o->terms, &data[2], &sizes[2]);
    for (int k = 0; k < 3 && !rc; k++) rc = cli_files_write(io, o->slot[k], data[k], sizes[k]);
    if (!rc) rc = cli_files_commit(io);
    for (int k = 0; k < 3; k++) free(data[k]);
    attn_slices_free(s, ns);
    attn_run_free(&r);
    return rc;
}

int cmd_attention(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            return 0;
        }
    opts o = {.layer = ATTN_ALL, .head = ATTN_MEAN, .so = {.same_length = -1}};
    if (parse(argc, argv, &o)) return 1;

    int rc = 1;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    int32_t *ids = NULL;
    uint32_t n = 0;
    txlm_model_options mo = {.no_verify = o.no_verify};
    /* the input file first: a bad one fails before the device starts */
    char *text = NULL;
    size_t len = 0;
    cli_files io;
    cli_files_init(&io);
    cli_files_input(&io, "the model", o.model);
    cli_files_input(&io, "the text", o.file);
    o.slot[0] = cli_files_output(&io, "-o", o.out, 1);
    o.slot[1] = cli_files_output(&io, "--f32", o.f32, 1);
    o.slot[2] = cli_files_output(&io, "--csv", o.csv, 0);
    if (cli_files_open(&io)) return 1;
    if (o.file && (!(text = cli_read_file(o.file, &len)) || cli_refuse_binary(o.file, text, len, o.binary_ok))) goto done;
    if (cli_open_model(o.model, &mo, &ctx, &m)) goto done;
    if (read_tokens(m, &o, text, len, &ids, &n)) goto done;
    rc = produce(m, &o, ids, n, &io);
    if (!rc) rc = cli_validation_status(ctx);
done:
    cli_files_abort(&io);
    free(text);
    free(ids);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}
