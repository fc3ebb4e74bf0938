/* The 60 hand-written sentences of the wt103 rules: the tokens each must
 * give (as HuggingFace's TransfoXLTokenizer gives them) and the text the
 * reverse gives back. test_wt103 checks the rules on them, test_spans
 * traces each token back to the sentence. */
#ifndef TXLM_TEST_WT103_CASES_H
#define TXLM_TEST_WT103_CASES_H

#include <stddef.h>

typedef struct wt_case {
    const char *in;
    const char *tokens;  /* space-separated */
    const char *back;    /* detokenized tokens; NULL: the input itself */
} wt_case;

static const wt_case cases[] = {
    /* the example of the reference tokenizer's own tests */
    {"Hello (bracket) and side-scrolled [and] Henry's $5,000 with 3.34 m. What's up!?",
     "Hello ( bracket ) and side @-@ scrolled [ and ] Henry 's $ 5 @,@ 000 with 3 @.@ 34 m . What 's up ! ?", NULL},
    {"This ain't funny. It's actually hillarious, yet double Ls. | [] < > [ ] & You're gonna shake it off? Don't?",
     "This ain 't funny . It 's actually hillarious , yet double Ls . | [ ] < > [ ] & You 're gonna shake it off ? Don 't ?",
     "This ain't funny. It's actually hillarious, yet double Ls. | [] < > [] & You're gonna shake it off? Don't?"},
    {"By the mid 1990s a version of the game became a Latvian television series (with a parliamentary setting, and "
     "played by Latvian celebrities).",
     "By the mid 1990s a version of the game became a Latvian television series ( with a parliamentary setting , and "
     "played by Latvian celebrities ) .",
     NULL},
    {"The meeting will take place at 11:00 a.m. Tuesday.", "The meeting will take place at 11 : 00 a.m. Tuesday .",
     "The meeting will take place at 11: 00 a.m. Tuesday."},
    {"'Hello.'", "'Hello . '", "'Hello. '"},
    {"2016, pp.", "2016 , pp .", NULL},
    {"abc def.", "abc def .", NULL},
    /* contractions, split the way Moses' English rules split them */
    {"Don't you know? I'd've said it's John's.", "Don 't you know ? I 'd've said it 's John 's .", NULL},
    {"They're sure we'll win, aren't they?", "They 're sure we 'll win , aren 't they ?", NULL},
    {"the 1990's", "the 1990 's", NULL},
    {"rock 'n' roll", "rock ' n ' roll", NULL},
    {"The Joneses' house", "The Joneses ' house", NULL},
    {"I said 'hi.'", "I said ' hi . '", NULL},
    {"It\xC2\xB4s fine", "It 's fine", "It's fine"},
    /* quotes */
    {"He said \"hello\" to me.", "He said \" hello \" to me .", NULL},
    {"\xE2\x80\x9CSmart quotes,\xE2\x80\x9D she said.", "\" Smart quotes , \" she said .", "\"Smart quotes,\" she said."},
    {"She said \"no\".", "She said \" no . \"", "She said \"no.\""},
    {"The \xE2\x80\x98quoted\xE2\x80\x99 word.", "The ' quoted ' word .", "The 'quoted' word."},
    {"``Penn quotes''", "\" Penn quotes \"", "\"Penn quotes\""},
    {"\xC2\xAB" "Bonjour" "\xC2\xBB dit-il.", "\" Bonjour \" dit @-@ il .", "\"Bonjour\" dit-il."},
    /* abbreviations and full stops */
    {"Mr. Smith went to Washington.", "Mr. Smith went to Washington .", NULL},
    {"No. 5 is here.", "No. 5 is here .", NULL},
    {"He said No. Then left.", "He said No . Then left .", NULL},
    {"I live in the U.S. Now.", "I live in the U.S. Now .", NULL},
    {"Dr. Who met Prof. X at St. Paul's.", "Dr. Who met Prof. X at St. Paul 's .", NULL},
    {"e.g. apples, i.e. fruit", "e.g. apples , i.e. fruit", NULL},
    {"100 m. Then", "100 m . Then", NULL},
    {"Wait... what?", "Wait ... what ?", NULL},
    {"It was good\xE2\x80\xA6really.", "It was good ... really .", "It was good... really."},
    /* numbers */
    {"The population was 1,234,567 in 2010.", "The population was 1 @,@ 234 @,@ 567 in 2010 .", NULL},
    {"Pi is about 3.14159.", "Pi is about 3 @.@ 14159 .", NULL},
    {"I paid 5,000.50 dollars, ok?", "I paid 5 @,@ 000 @.@ 50 dollars , ok ?", NULL},
    {"Numbers like 3,a and a,3 and 5,", "Numbers like 3 , a and a , 3 and 5 ,", "Numbers like 3, a and a, 3 and 5,"},
    {"50 % of people", "50 % of people", "50% of people"},
    {"1\xC2\xA0" "000 people", "1 @.@ 000 people", "1.000 people"},
    {"It costs $5.99 (about \xE2\x82\xAC" "5).", "It costs $ 5 @.@ 99 ( about \xE2\x82\xAC 5 ) .", NULL},
    /* hyphens and dashes */
    {"A well-known state-of-the-art e-mail.", "A well @-@ known state @-@ of @-@ the @-@ art e @-@ mail .", NULL},
    {"Pages 10-20 and 5--6", "Pages 10 @-@ 20 and 5--6", NULL},
    {"An en\xE2\x80\x93" "dash and an em\xE2\x80\x94" "dash.", "An en @-@ dash and an em - dash .",
     "An en-dash and an em - dash."},
    /* brackets and symbols */
    {"Brackets [like this] and {that} and <this>.", "Brackets [ like this ] and { that } and < this > .",
     "Brackets [like this] and {that} and < this >."},
    {"f(x) = y", "f ( x ) = y", "f (x) = y"},
    {"He left at 5 pm; she stayed : no.", "He left at 5 pm ; she stayed : no .", "He left at 5 pm; she stayed: no."},
    {"x/y and a+b=c", "x / y and a + b = c", "x / y and a + b = c"},
    {"Email me at a@b.com!", "Email me at a @ b.com !", "Email me at a @ b.com!"},
    {"Hello!!!", "Hello ! ! !", "Hello!!!"},
    {"Is it 10:30?", "Is it 10 : 30 ?", "Is it 10: 30?"},
    /* letters beyond ASCII, CJK, whitespace, special symbols */
    {"Caf\xC3\xA9 au lait, na\xC3\xAFve r\xC3\xA9sum\xC3\xA9.", "Caf\xC3\xA9 au lait , na\xC3\xAFve r\xC3\xA9sum\xC3\xA9 .",
     NULL},
    {"Z\xC3\xBCrich's population", "Z\xC3\xBCrich 's population", NULL},
    {"Japan is \xE6\x97\xA5\xE6\x9C\xAC in Japanese.", "Japan is \xE6\x97\xA5 \xE6\x9C\xAC in Japanese .", NULL},
    {"  Tabs\tand \x01  spaces  ", "Tabs and spaces", "Tabs and spaces"},
    {"Use <unk> for unknown words.", "Use <unk> for unknown words .", NULL},
    {"A <UNK> and <eos>.", "A <UNK> and <eos> .", NULL},
    /* normaliser examples of sacremoses' own tests, then tokenised */
    {"The United States in 1805 (color map)                 _Facing_     193",
     "The United States in 1805 ( color map ) _ Facing _ 193", "The United States in 1805 (color map) _ Facing _ 193"},
    {"=Formation of the Constitution.=--(1) The plans before the convention,",
     "= Formation of the Constitution . = -- ( 1 ) The plans before the convention ,",
     "= Formation of the Constitution. = -- (1) The plans before the convention,"},
    {"directions--(1) The infective element must be eliminated. When the ulcer",
     "directions-- ( 1 ) The infective element must be eliminated . When the ulcer",
     "directions-- (1) The infective element must be eliminated. When the ulcer"},
    {"College of Surgeons, Edinburgh.)]", "College of Surgeons , Edinburgh . ) ]", "College of Surgeons, Edinburgh.)]"},
    {"THIS EBOOK IS OTHERWISE PROVIDED TO YOU \"AS-IS\".", "THIS EBOOK IS OTHERWISE PROVIDED TO YOU \" AS @-@ IS . \"",
     "THIS EBOOK IS OTHERWISE PROVIDED TO YOU \"AS-IS.\""},
    {"12\xC2\xA0" "123", "12 @.@ 123", "12.123"},
    {"yesterday \xE2\x80\x99s reception", "yesterday ' s reception", "yesterday 's reception"},
    {"", "", NULL},
};

#define WT103_N_CASES (sizeof cases / sizeof *cases)

#endif
