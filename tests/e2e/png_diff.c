/* Compares two PNG files pixel by pixel: exit 0 when they have the same
 * size and at most MAX_SHARE of their pixels differ by more than TOL in
 * any channel (a different device may round an attention probability, and
 * so a colour, one step differently), 1 otherwise, printing the counts.
 * usage: png_diff A.png B.png [TOL [MAX_SHARE]] */
#include <stdio.h>
#include <stdlib.h>

#include "../common/stb_png.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s A.png B.png [TOL [MAX_SHARE]]\n", argv[0]);
        return 2;
    }
    int tol = argc > 3 ? atoi(argv[3]) : 8;
    double max_share = argc > 4 ? atof(argv[4]) : 0.002;
    int w[2], h[2], comp;
    unsigned char *px[2];
    for (int i = 0; i < 2; i++)
        if (!(px[i] = stbi_load(argv[1 + i], &w[i], &h[i], &comp, 3))) {
            fprintf(stderr, "%s: %s\n", argv[1 + i], stbi_failure_reason());
            return 1;
        }
    if (w[0] != w[1] || h[0] != h[1]) {
        printf("%s is %dx%d, %s is %dx%d\n", argv[1], w[0], h[0], argv[2], w[1], h[1]);
        return 1;
    }
    size_t n = (size_t)w[0] * h[0], off = 0;
    for (size_t e = 0; e < n; e++) {
        int d = 0;
        for (int c = 0; c < 3; c++) d |= abs(px[0][3 * e + c] - px[1][3 * e + c]) > tol;
        off += d;
    }
    printf("%s: %zu of %zu pixels differ by more than %d\n", argv[2], off, n, tol);
    stbi_image_free(px[0]);
    stbi_image_free(px[1]);
    return off > max_share * n;
}
