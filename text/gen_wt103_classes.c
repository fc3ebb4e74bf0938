/* Build-time generator of the wt103 character classes (text/wt103_chars.c)
 * from ICU's Unicode tables: writes a C file holding a two-level table of
 * class bits for U+0000..U+1FFFF (nothing above has a class).
 *
 * The classes are those of sacremoses 0.1.1, the Moses port HuggingFace's
 * TransfoXLTokenizer runs. Its letter, number and currency classes are
 * character lists made with Perl, not Unicode properties read at run time,
 * so they stay as the Unicode of that Perl defined them: the rules below
 * say which (docs/tokenizers.md, "Character classes"), and
 * tests/text/test_wt103_sweep.c compares the result with the lists for
 * every code point.
 *
 * usage: gen_wt103_classes OUT.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/uchar.h>
#include <unicode/uscript.h>

#include "wt103_class_bits.h"

#define LIMIT 0x20000
#define BLOCK 128

/* Became Other_Alphabetic after Unicode 7.0 (Tibetan, Myanmar, Lepcha,
 * Syloti Nagri marks), so ICU says alphabetic and the lists do not. */
static const UChar32 later_alphabetic[][2] = {
    {0x0F82, 0x0F83}, {0x1063, 0x1064}, {0x1069, 0x106D}, {0x1087, 0x108D}, {0x108F, 0x108F}, {0x109A, 0x109B},
    {0x1C36, 0x1C36}, {0xA802, 0xA802}, {0xA80B, 0xA80B}, {0xA9E5, 0xA9E5}, {0xAA7B, 0xAA7D},
};
/* ETHIOPIC COMBINING GEMINATION MARK was Other_Alphabetic in Unicode 7.0.
 * DOTTED CIRCLE is in IsAlpha, IsAlnum and IsLower because the lists show
 * each combining mark on one (it occurs 514 times in IsAlpha.txt); being
 * in the list, it is a letter to the tokenizer. */
#define GEMINATION 0x135F
#define DOTTED_CIRCLE 0x25CC

/* sacremoses' indic.py: VIRAMAS and NUKTAS, which its MosesTokenizer adds
 * to IsAlpha and IsAlnum (not its MosesDetokenizer). A hand-picked list,
 * not a Unicode property, so it is copied as it is. */
static const UChar32 indic_marks[] = {
    0x094D,  0x09CD,  0x0A4D,  0x0ACD,  0x0B4D,  0x0BCD,  0x0C4D,  0x0CCD,  0x0D3B,  0x0D3C,  0x0D4D,  0x0EBA,
    0x1039,  0x1714,  0x1BAB,  0xA8C4,  0xA8F3,  0xA8F4,  0xA953,  0xAAF6,  0x10A3F, 0x11046, 0x110B9, 0x11133,
    0x111C0, 0x11235, 0x112EA, 0x1134D, 0x11442, 0x114C2, 0x115BF, 0x1163F, 0x116B6, 0x11839, 0x119E0, 0x11A34,
    0x11C3F, 0x11D45, 0x11D97, 0x0DCA,  0x093C,  0x09BC,  0x0A3C,  0x0ABC,  0x0AFD,  0x0AFE,  0x0AFF,  0x0B3C,
    0x0CBC,  0x1C37,  0x110BA, 0x11173, 0x111CA, 0x11236, 0x112E9, 0x1133C, 0x11446, 0x114C3, 0x115C0, 0x116B7,
    0x1183A, 0x11D42, 0x1E94A,
};

static int age_at_most(UChar32 c, int major, int minor)
{
    UVersionInfo v;
    u_charAge(c, v);
    return v[0] < major || (v[0] == major && v[1] <= minor);
}

static int in_pairs(UChar32 c, const UChar32 (*r)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c >= r[i][0] && c <= r[i][1]) return 1;
    return 0;
}

/* The lists hold the Basic Multilingual Plane as Unicode 7.0 assigned it,
 * without the Han script and the Hangul syllables (characters without
 * names of their own, left out when the lists were extracted). */
static int listed(UChar32 c)
{
    UErrorCode e = U_ZERO_ERROR;
    return c <= 0xFFFF && age_at_most(c, 7, 0) && uscript_getScript(c, &e) != USCRIPT_HAN &&
           ublock_getCode(c) != UBLOCK_HANGUL_SYLLABLES;
}

static int perl_alpha(UChar32 c)
{
    if (c == GEMINATION || c == DOTTED_CIRCLE) return 1;
    return listed(c) && u_hasBinaryProperty(c, UCHAR_ALPHABETIC) &&
           !in_pairs(c, later_alphabetic, sizeof later_alphabetic / sizeof *later_alphabetic);
}

static int indic_mark(UChar32 c)
{
    for (size_t i = 0; i < sizeof indic_marks / sizeof *indic_marks; i++)
        if (indic_marks[i] == c) return 1;
    return 0;
}

static unsigned classes(UChar32 c)
{
    int gc = u_charType(c), dir = u_charDirection(c);
    int alpha = perl_alpha(c), nd = gc == U_DECIMAL_DIGIT_NUMBER;
    int number = nd || gc == U_LETTER_NUMBER || gc == U_OTHER_NUMBER;
    unsigned k = 0;
    if (alpha || indic_mark(c)) k |= WT_T_ALPHA;
    if (alpha || indic_mark(c) || (listed(c) && nd)) k |= WT_T_ALNUM;
    if (alpha) k |= WT_D_ALPHA;
    if (listed(c) && number) k |= WT_NUMBER;
    if (listed(c) && gc == U_CURRENCY_SYMBOL) k |= WT_CURRENCY;
    /* IsLower was extracted later, as Unicode 9.0 had it (all planes);
     * Georgian Mkhedruli became lower-case letters in Unicode 11.0. */
    if ((age_at_most(c, 9, 0) && u_hasBinaryProperty(c, UCHAR_LOWERCASE) && ublock_getCode(c) != UBLOCK_GEORGIAN) ||
        c == DOTTED_CIRCLE)
        k |= WT_LOWER;
    /* Python's re: \d is Nd, \s is str.isspace() */
    if (nd) k |= WT_DIGIT;
    if (gc == U_SPACE_SEPARATOR || dir == U_WHITE_SPACE_NEUTRAL || dir == U_BLOCK_SEPARATOR || dir == U_SEGMENT_SEPARATOR)
        k |= WT_SPACE;
    return k;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT.c\n", argv[0]);
        return 2;
    }
    static unsigned char bits[LIMIT], blocks[LIMIT / BLOCK][BLOCK];
    static unsigned short index[LIMIT / BLOCK];
    for (UChar32 c = 0; c < 0x110000; c++) {
        unsigned k = c >= 0xD800 && c < 0xE000 ? 0 : classes(c);
        if (c >= LIMIT && k) {
            fprintf(stderr, "U+%04X has classes 0x%x, above the table's U+%04X\n", (unsigned)c, k, LIMIT - 1);
            return 1;
        }
        if (c < LIMIT) bits[c] = (unsigned char)k;
    }
    int nb = 0;
    for (int b = 0; b < LIMIT / BLOCK; b++) {
        int j = 0;
        while (j < nb && memcmp(blocks[j], bits + b * BLOCK, BLOCK)) j++;
        if (j == nb) memcpy(blocks[nb++], bits + b * BLOCK, BLOCK);
        index[b] = (unsigned short)j;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fprintf(f, "/* Generated by text/gen_wt103_classes.c from ICU %s (Unicode %s). */\n", U_ICU_VERSION,
            U_UNICODE_VERSION);
    fprintf(f, "#include \"wt103_class_bits.h\"\n\nconst unsigned short txlm_wt_class_index[%d] = {", LIMIT / BLOCK);
    for (int b = 0; b < LIMIT / BLOCK; b++) fprintf(f, "%s%d,", b % 24 ? "" : "\n", index[b]);
    fprintf(f, "\n};\n\nconst unsigned char txlm_wt_class_blocks[%d][%d] = {\n", nb, BLOCK);
    for (int j = 0; j < nb; j++) {
        fputs("{", f);
        for (int i = 0; i < BLOCK; i++) fprintf(f, "%s%d,", i % 32 ? "" : "\n", blocks[j][i]);
        fputs("},\n", f);
    }
    fputs("};\n", f);
    return fclose(f) ? 1 : 0;
}
