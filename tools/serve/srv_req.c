/* Requests' lifetimes (serve.h): made by the HTTP thread, held by it and
 * by the scheduler while its streams run; freed by whichever lets go last. */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "serve.h"
#include "srv_job.h"
#include "srv_params.h"

srv_req *srv_req_new(srv *sv, srv_kind kind, int key)
{
    srv_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->sv = sv, r->kind = kind, r->key = key, r->refs = 1, r->fd = -1;
    uint8_t b[12] = {0};
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) memcpy(b, &r, sizeof r < sizeof b ? sizeof r : sizeof b);
    int n = snprintf(r->id, sizeof r->id, kind == SRV_SCORE ? "score-" : "cmpl-");
    for (size_t i = 0; i < sizeof b; i++) n += snprintf(r->id + n, sizeof r->id - (size_t)n, "%02x", b[i]);
    r->created = (long long)time(NULL);
    return r;
}

int srv_req_unref(srv_req *r) { return --r->refs == 0; }

void srv_req_wake(srv_req *r)
{
    if (r->conn && r->suspended && (r->sse.len || r->finished)) {
        r->suspended = 0;
        MHD_resume_connection(r->conn);
    }
}

void srv_req_free(srv_req *r)
{
    if (!r) return;
    for (uint32_t i = 0; r->jobs && i < r->n_jobs; i++) srv_job_free(&r->jobs[i]);
    free(r->jobs);
    srv_gen_free(&r->gen);
    txlm_token_spans_free(&r->spans);
    free(r->text);
    free(r->body);
    srv_buf_free(&r->sse);
    srv_buf_free(&r->out);
    free(r);
}
