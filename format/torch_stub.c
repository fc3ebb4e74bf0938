/* Replaced by the torch readers (torch_zip.c, torch_legacy.c, pickle.c). */
#include "torch.h"
#include "txlm.h"

int txlm_torch_sniff(const void *head, uint64_t len) { (void)head; (void)len; return 0; }
int txlm_torch_open(const char *path, txlm_checkpoint **out, txlm_err *err)
{
    (void)out;
    return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: torch.save checkpoints are not supported yet", path);
}
int txlm_vocab_load_pickle(const char *path, txlm_vocab_buf *out, txlm_err *err)
{
    (void)out;
    return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: pickled vocabularies are not supported yet", path);
}
int txlm_vocab_sniff_pickle(const void *head, uint64_t len) { (void)head; (void)len; return 0; }
