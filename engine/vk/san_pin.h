/* Keeps loaded libraries loaded in sanitizer builds (engine/vk/san_pin.c). */
#ifndef TXLM_SAN_PIN_H
#define TXLM_SAN_PIN_H

void txlm_san_pin_libraries(void);

#endif
