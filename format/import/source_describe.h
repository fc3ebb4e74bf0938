/* What an input no source takes looks like, for txlm-pack's message. */
#ifndef TXLM_SOURCE_DESCRIBE_H
#define TXLM_SOURCE_DESCRIBE_H

#include <stddef.h>

#include "source.h"

/* "is an empty file", "is a JSON file (a config.json? ...)", ... into out. */
void txlm_describe_input(const txlm_probe *p, char *out, size_t cap);

#endif
