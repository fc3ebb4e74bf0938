/* stb_image's PNG decoder for the tests that read pictures back, compiled
 * into the including file (one per program), outside our warning flags. */
#ifndef TXLM_TEST_COMMON_STB_PNG_H
#define TXLM_TEST_COMMON_STB_PNG_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

#endif
