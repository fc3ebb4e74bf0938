/* The fields of POST /v1/completions, read and checked into an srv_gen
 * (serve.h); docs/server.md lists them and their ranges. */
#ifndef TXLM_SRV_PARAMS_H
#define TXLM_SRV_PARAMS_H

#include "serve.h"
#include "srv_json.h"

/* 0, or -1 after filling e. g is filled either way: release it with srv_gen_free. */
int srv_gen_parse(const srv *sv, const cJSON *o, srv_gen *g, srv_err *e);
void srv_gen_free(srv_gen *g);

#endif
