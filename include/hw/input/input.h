/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keyboard input layer: QEMU's key names (QKeyCode "qcode" strings
 * and "number" XT codes, as send-key takes them), their scancodes in
 * sets 1 and 2, and the list of guest keyboards that receive key events
 * (the i8042's PS/2 keyboard, every usb-kbd).  A key event goes to every
 * registered keyboard; each turns it into its own wire format.
 */
#ifndef HW_INPUT_INPUT_H
#define HW_INPUT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu/typedefs.h"

/* A key: an index into the qcode table (0 is "unmapped"). */
typedef unsigned InputKey;

/* Scancode flags (low byte: the code). */
#define INPUT_SC_E0     0x100   /* sent after an 0xE0 prefix */

typedef struct InputKeyInfo {
    const char *qcode;          /* QKeyCode name */
    uint16_t set1;              /* XT set 1 (0: none); INPUT_SC_E0 flag */
    uint16_t set2;              /* AT set 2 (0: none); INPUT_SC_E0 flag */
} InputKeyInfo;

/* The key named qcode, or 0 when QEMU has no such QKeyCode. */
InputKey input_key_from_qcode(const char *qcode);
/*
 * The key of a QEMU "number" (its XT code, 0x80 | code for 0xE0-prefixed
 * keys), or 0 when no key has it.
 */
InputKey input_key_from_number(int64_t number);
const InputKeyInfo *input_key_info(InputKey key);
/* Number of table entries (keys are 0..input_key_count() - 1). */
size_t input_key_count(void);

/*
 * The bytes a keyboard in scancode set 1 or 2 sends when key goes down
 * or up; returns how many were written to buf (at most 8, 0 when the key
 * has no code in that set).
 */
size_t input_key_scancodes(InputKey key, bool down, int set, uint8_t *buf);

typedef void InputKeyHandler(void *opaque, InputKey key, bool down);

/* A guest keyboard joins (or leaves) the receivers of key events. */
void input_keyboard_register(InputKeyHandler *fn, void *opaque);
void input_keyboard_unregister(void *opaque);
/* Delivers one key event to every registered keyboard. */
void input_key_event(InputKey key, bool down);
/* ... to every one but those registered with handler @except. */
void input_key_event_except(InputKey key, bool down, InputKeyHandler *except);

/*
 * send-key: presses keys in order, then releases them in reverse order
 * hold_ms milliseconds of guest time later.
 */
void input_send_keys(const InputKey *keys, size_t n, int64_t hold_ms);
/*
 * HMP "sendkey": parses "ctrl-alt-delete" (qcode names, or numbers such
 * as 0x1d, joined by '-') and sends them as send-key does.
 */
bool input_hmp_sendkey(const char *keys, int64_t hold_ms, Error **errp);

#endif
