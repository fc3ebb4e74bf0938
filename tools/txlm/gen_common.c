/* Generation options and streamed replies, shared by txlm generate and
 * txlm chat (gen_common.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gen_common.h"

const char *const gen_flags[] = {"-n", "--n-predict", "--temperature", "--temp", "--top-k", "--top-p", "--seed", "-s",
                                 "--stop", "--repeat-penalty", "--repeat-last-n", NULL};

const char gen_help[] =
    "  -n N                tokens to generate, -1 to 2147483647 (-1: no limit, until a stop string or Ctrl-C)\n"
    "  --temperature T     also --temp: 1 = the model's distribution, <= 0 = the most likely token\n"
    "  --top-k K           keep the K most likely tokens (0: off)\n"
    "  --top-p P           keep the smallest set with probability P, in (0, 1] (1: off)\n"
    "  --repeat-penalty R  llama.cpp's: the log-probability of each token among the last\n"
    "                      --repeat-last-n N (default 64, the prompt included) is multiplied by R\n"
    "                      (R > 1: repeats less likely; 1: off)\n"
    "  --repeat-last-n N   the tokens --repeat-penalty looks back over (default 64; 0: none)\n"
    "  --stop STR          stop when the text generated contains STR (repeatable; STR is not printed;\n"
    "                      \\n and \\t are read as a line break and a tab)\n"
    "  --seed S            also -s: same seed, same text (default: a random seed, told on stderr)\n";

volatile sig_atomic_t gen_interrupted;

void gen_on_sigint(int sig)
{
    (void)sig;
    gen_interrupted = 1;
}

int gen_stop_requested(void *user, double fraction)
{
    (void)user, (void)fraction;
    return gen_interrupted;
}

void gen_defaults(gen_opts *g, int64_t n_gen)
{
    memset(g, 0, sizeof *g);
    g->samp.temperature = 1.0f;
    g->repeat_penalty = 1.0f;
    g->repeat_last_n = 64;
    g->n_gen = n_gen;
}

static int parse_float(const char *v, const char *flag, float *out)
{
    char *end;
    errno = 0;
    float x = strtof(v, &end);
    if (!*v || *end || !isfinite(x)) return cli_error("%s: \"%s\" is not a finite number", flag, v), -1;
    *out = x;
    return 1;
}

/* --stop's value with \n, \t and \\ read as escapes: a line break cannot
 * be typed into one argument easily. */
static char *unescape(const char *v)
{
    char *s = malloc(strlen(v) + 1), *o = s;
    if (!s) return NULL;
    for (const char *p = v; *p; p++) {
        if (*p == '\\' && (p[1] == 'n' || p[1] == 't' || p[1] == '\\')) {
            p++;
            *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : '\\';
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return s;
}

int gen_add_stop(gen_opts *g, const char *v)
{
    if (!*v) return cli_error("--stop: an empty string would stop at once");
    if (g->n_stops == GEN_MAX_STOPS) return cli_error("--stop: at most %d stop strings", GEN_MAX_STOPS);
    if (!(g->stops[g->n_stops] = unescape(v))) return cli_error("out of memory");
    g->n_stops++;
    return 0;
}

void gen_free(gen_opts *g)
{
    for (size_t i = 0; i < g->n_stops; i++) free(g->stops[i]);
    g->n_stops = 0;
}

static int parse_n(const char *v, const char *a, gen_opts *g)
{
    int32_t n;
    if (cli_parse_range(v, a, -1, INT32_MAX, &n)) return -1; /* -1: no limit */
    g->n_gen = n;
    return 1;
}

int gen_option(const char *a, const char *v, gen_opts *g)
{
    txlm_sampling *o = &g->samp;
    if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) return parse_n(v, a, g);
    if (!strcmp(a, "--temperature") || !strcmp(a, "--temp")) return parse_float(v, a, &o->temperature);
    if (!strcmp(a, "--top-k")) return cli_parse_u32(v, a, &o->top_k) ? -1 : 1;
    if (!strcmp(a, "--top-p")) {
        if (parse_float(v, a, &o->top_p) < 0) return -1;
        return o->top_p > 0 && o->top_p <= 1 ? 1 : (cli_error("--top-p: %s is outside (0, 1]", v), -1);
    }
    if (!strcmp(a, "--repeat-penalty")) {
        if (parse_float(v, a, &g->repeat_penalty) < 0) return -1;
        return g->repeat_penalty > 0 ? 1 : (cli_error("--repeat-penalty: must be above 0 (1: off)"), -1);
    }
    if (!strcmp(a, "--repeat-last-n")) return cli_parse_u32(v, a, &g->repeat_last_n) ? -1 : 1;
    if (!strcmp(a, "--stop")) return gen_add_stop(g, v) ? -1 : 1;
    if (!strcmp(a, "--seed") || !strcmp(a, "-s")) {
        char *end;
        errno = 0;
        g->seed = strtoull(v, &end, 10);
        if (!*v || *v == '-' || *end || errno) return cli_error("%s: \"%s\" is not a number in [0, 2^64)", a, v), -1;
        g->seed_given = 1;
        return 1;
    }
    return 0;
}

uint64_t gen_seed(const gen_opts *g)
{
    if (g->seed_given) return g->seed;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    /* a 32-bit seed is short enough to type back */
    uint64_t seed = ((uint64_t)t.tv_nsec * 2654435761u ^ (uint64_t)t.tv_sec ^ ((uint64_t)getpid() << 16)) & 0xffffffffu;
    fprintf(stderr, "txlm: seed %llu (--seed %llu makes this text again)\n", (unsigned long long)seed,
            (unsigned long long)seed);
    return seed;
}

int gen_check_model(const gen_opts *g, const txlm_model *m)
{
    uint32_t v = txlm_vocab_size(m);
    return g->samp.top_k > v ? cli_error("--top-k %u: more than the vocabulary's %u tokens (0: off)", g->samp.top_k, v) : 0;
}
