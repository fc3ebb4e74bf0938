#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

void fuzz_require(int cond, const char *what)
{
    if (cond) return;
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
}
