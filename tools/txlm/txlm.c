/* txlm: run Transformer-XL models on any Vulkan device. */
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} commands[] = {
    {"devices", cmd_devices, "list Vulkan devices and the one txlm uses"},
    {"info", cmd_info, "show a model's hyper-parameters and tensors"},
    {"logprobs", cmd_logprobs, "write log-probabilities of token segments"},
    {"eval", cmd_eval, "perplexity or bits per character of a text file"},
    {"score", cmd_score, "surprisal of every token or word of a text"},
    {"compare", cmd_compare, "how far one model's predictions are from another's"},
    {"generate", cmd_generate, "generate text from a prompt"},
    {"chat", cmd_chat, "an interactive loop: each line answered, the memory kept across turns"},
    {"attention", cmd_attention, "pictures of what the model attends to"},
    {"bench", cmd_bench, "evaluation, generation and load speed of a model"},
    {"serve", cmd_serve, "an HTTP server: OpenAI's completions protocol, sessions, batching"},
};

static void usage(FILE *to)
{
    fprintf(to, "usage: txlm COMMAND [options]   (txlm COMMAND --help for details)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\nenvironment: TXLM_DEVICE=<index or name substring> picks the device;\n"
                "             TXLM_VALIDATION=1 enables the Vulkan validation layer.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("txlm %d.%d.%d\n", TXLM_VERSION_MAJOR, TXLM_VERSION_MINOR, TXLM_VERSION_PATCH);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    return cli_error("unknown command \"%s\" (txlm --help lists the commands)", argv[1]);
}
