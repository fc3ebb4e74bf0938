/* What every public header of txlm-glib shares: the export macro and the
 * guard that keeps applications on the one header, <txlm-glib.h>. */
#if !defined(TXLM_GLIB_INSIDE) && !defined(TXLM_GLIB_COMPILATION)
#error "Only <txlm-glib.h> can be included directly."
#endif

#ifndef TXLM_GLIB_MACROS_H
#define TXLM_GLIB_MACROS_H

/* What libtxlm-glib-1.0.so exports (everything else in it is hidden). */
#ifndef TXLM_GLIB_API
#if defined(__GNUC__)
#define TXLM_GLIB_API __attribute__((visibility("default"))) extern
#else
#define TXLM_GLIB_API extern
#endif
#endif

#endif
