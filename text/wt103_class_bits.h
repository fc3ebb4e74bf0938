/* The class bits of the generated wt103 character table
 * (text/gen_wt103_classes.c writes it, text/wt103_chars.c reads it). */
#ifndef TXLM_WT103_CLASS_BITS_H
#define TXLM_WT103_CLASS_BITS_H

enum {
    WT_T_ALNUM = 1 << 0,  /* the tokenizer's IsAlnum: padding, dash splits */
    WT_T_ALPHA = 1 << 1,  /* the tokenizer's IsAlpha: apostrophes, prefixes */
    WT_D_ALPHA = 1 << 2,  /* the detokenizer's IsAlpha: contractions */
    WT_NUMBER = 1 << 3,   /* IsN */
    WT_LOWER = 1 << 4,    /* IsLower */
    WT_CURRENCY = 1 << 5, /* IsSc */
    WT_DIGIT = 1 << 6,    /* Python's \d */
    WT_SPACE = 1 << 7,    /* Python's \s (str.isspace) */
};

/* Code points below WT_CLASS_LIMIT: blocks[index[c / 128]][c % 128]. */
#define WT_CLASS_LIMIT 0x20000
extern const unsigned short txlm_wt_class_index[WT_CLASS_LIMIT / 128];
extern const unsigned char txlm_wt_class_blocks[][128];

#endif
