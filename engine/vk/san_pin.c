/* Sanitizer builds only: keeps every shared object that is loaded when a
 * context closes (the Vulkan driver, the validation layer, LLVM) loaded
 * until exit. The Vulkan loader unloads them at vkDestroyInstance, and
 * LeakSanitizer cannot name functions of an unloaded library, so driver
 * leaks could be neither attributed nor suppressed (tests/lsan.supp). */
#define _GNU_SOURCE
#include "san_pin.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TXLM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TXLM_ASAN 1
#endif

#ifdef TXLM_ASAN
#include <dlfcn.h>
#include <stddef.h>
#include <link.h>

static int pin(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    /* NOLOAD finds the object already mapped; NODELETE makes it stay. */
    if (info->dlpi_name && info->dlpi_name[0]) dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    return 0;
}

void txlm_san_pin_libraries(void) { dl_iterate_phdr(pin, NULL); }
#else
void txlm_san_pin_libraries(void) {}
#endif
