/* The one translation unit that instantiates stb_ds (Debian libstb-dev). */
#define STB_DS_IMPLEMENTATION
#include <stb/stb_ds.h>
