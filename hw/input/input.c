/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Keyboard input: QEMU's key names with their scancodes, the keyboards
 * that receive key events, and the QMP send-key command.
 *
 * The scancodes are the IBM PC/AT keyboard's: set 1 (XT, what the
 * i8042 hands the guest when it translates) and set 2 (AT, what the
 * keyboard itself sends).  An "E0" flag marks the extended keys that
 * follow an 0xE0 prefix; the break code is the make code with bit 7 set
 * in set 1 and after an 0xF0 prefix in set 2.
 */
#include "qemu/osdep.h"
#include "hw/input/input.h"
#include "monitor/monitor.h"
#include "qapi/error.h"
#include "qemu/timer.h"
#include "trace.h"

#define E0 INPUT_SC_E0

/* In QEMU's QKeyCode order; entry 0 is "unmapped". */
static const InputKeyInfo input_keys[] = {
    { "unmapped", 0, 0 },
    { "shift", 0x2a, 0x12 },
    { "shift_r", 0x36, 0x59 },
    { "alt", 0x38, 0x11 },
    { "alt_r", E0 | 0x38, E0 | 0x11 },
    { "ctrl", 0x1d, 0x14 },
    { "ctrl_r", E0 | 0x1d, E0 | 0x14 },
    { "menu", E0 | 0x5d, E0 | 0x2f },
    { "esc", 0x01, 0x76 },
    { "1", 0x02, 0x16 },
    { "2", 0x03, 0x1e },
    { "3", 0x04, 0x26 },
    { "4", 0x05, 0x25 },
    { "5", 0x06, 0x2e },
    { "6", 0x07, 0x36 },
    { "7", 0x08, 0x3d },
    { "8", 0x09, 0x3e },
    { "9", 0x0a, 0x46 },
    { "0", 0x0b, 0x45 },
    { "minus", 0x0c, 0x4e },
    { "equal", 0x0d, 0x55 },
    { "backspace", 0x0e, 0x66 },
    { "tab", 0x0f, 0x0d },
    { "q", 0x10, 0x15 },
    { "w", 0x11, 0x1d },
    { "e", 0x12, 0x24 },
    { "r", 0x13, 0x2d },
    { "t", 0x14, 0x2c },
    { "y", 0x15, 0x35 },
    { "u", 0x16, 0x3c },
    { "i", 0x17, 0x43 },
    { "o", 0x18, 0x44 },
    { "p", 0x19, 0x4d },
    { "bracket_left", 0x1a, 0x54 },
    { "bracket_right", 0x1b, 0x5b },
    { "ret", 0x1c, 0x5a },
    { "a", 0x1e, 0x1c },
    { "s", 0x1f, 0x1b },
    { "d", 0x20, 0x23 },
    { "f", 0x21, 0x2b },
    { "g", 0x22, 0x34 },
    { "h", 0x23, 0x33 },
    { "j", 0x24, 0x3b },
    { "k", 0x25, 0x42 },
    { "l", 0x26, 0x4b },
    { "semicolon", 0x27, 0x4c },
    { "apostrophe", 0x28, 0x52 },
    { "grave_accent", 0x29, 0x0e },
    { "backslash", 0x2b, 0x5d },
    { "z", 0x2c, 0x1a },
    { "x", 0x2d, 0x22 },
    { "c", 0x2e, 0x21 },
    { "v", 0x2f, 0x2a },
    { "b", 0x30, 0x32 },
    { "n", 0x31, 0x31 },
    { "m", 0x32, 0x3a },
    { "comma", 0x33, 0x41 },
    { "dot", 0x34, 0x49 },
    { "slash", 0x35, 0x4a },
    { "asterisk", 0x37, 0x7c },
    { "spc", 0x39, 0x29 },
    { "caps_lock", 0x3a, 0x58 },
    { "f1", 0x3b, 0x05 },
    { "f2", 0x3c, 0x06 },
    { "f3", 0x3d, 0x04 },
    { "f4", 0x3e, 0x0c },
    { "f5", 0x3f, 0x03 },
    { "f6", 0x40, 0x0b },
    { "f7", 0x41, 0x83 },
    { "f8", 0x42, 0x0a },
    { "f9", 0x43, 0x01 },
    { "f10", 0x44, 0x09 },
    { "num_lock", 0x45, 0x77 },
    { "scroll_lock", 0x46, 0x7e },
    { "kp_divide", E0 | 0x35, E0 | 0x4a },
    { "kp_multiply", 0x37, 0x7c },
    { "kp_subtract", 0x4a, 0x7b },
    { "kp_add", 0x4e, 0x79 },
    { "kp_enter", E0 | 0x1c, E0 | 0x5a },
    { "kp_decimal", 0x53, 0x71 },
    { "sysrq", 0x54, 0x84 },
    { "kp_0", 0x52, 0x70 },
    { "kp_1", 0x4f, 0x69 },
    { "kp_2", 0x50, 0x72 },
    { "kp_3", 0x51, 0x7a },
    { "kp_4", 0x4b, 0x6b },
    { "kp_5", 0x4c, 0x73 },
    { "kp_6", 0x4d, 0x74 },
    { "kp_7", 0x47, 0x6c },
    { "kp_8", 0x48, 0x75 },
    { "kp_9", 0x49, 0x7d },
    { "less", 0x56, 0x61 },
    { "f11", 0x57, 0x78 },
    { "f12", 0x58, 0x07 },
    { "print", E0 | 0x37, E0 | 0x7c },
    { "home", E0 | 0x47, E0 | 0x6c },
    { "pgup", E0 | 0x49, E0 | 0x7d },
    { "pgdn", E0 | 0x51, E0 | 0x7a },
    { "end", E0 | 0x4f, E0 | 0x69 },
    { "left", E0 | 0x4b, E0 | 0x6b },
    { "up", E0 | 0x48, E0 | 0x75 },
    { "down", E0 | 0x50, E0 | 0x72 },
    { "right", E0 | 0x4d, E0 | 0x74 },
    { "insert", E0 | 0x52, E0 | 0x70 },
    { "delete", E0 | 0x53, E0 | 0x71 },
    { "stop", E0 | 0x68, E0 | 0x28 },
    { "again", 0, 0 },
    { "props", 0, 0 },
    { "undo", 0, 0 },
    { "front", 0, 0 },
    { "copy", 0, 0 },
    { "open", 0, 0 },
    { "paste", 0, 0 },
    { "find", 0, 0 },
    { "cut", 0, 0 },
    { "lf", 0, 0 },
    { "help", 0, 0 },
    { "meta_l", E0 | 0x5b, E0 | 0x1f },
    { "meta_r", E0 | 0x5c, E0 | 0x27 },
    { "compose", E0 | 0x5d, E0 | 0x2f },
    { "pause", 0, 0 },              /* its own sequence, see below */
    { "ro", 0x73, 0x51 },
    { "hiragana", 0x70, 0x13 },
    { "henkan", 0x79, 0x64 },
    { "yen", 0x7d, 0x6a },
    { "muhenkan", 0x7b, 0x67 },
    { "katakanahiragana", 0x70, 0x13 },
    { "kp_comma", 0x7e, 0x6d },
    { "kp_equals", 0x59, 0x0f },
    { "power", E0 | 0x5e, E0 | 0x37 },
    { "sleep", E0 | 0x5f, E0 | 0x3f },
    { "wake", E0 | 0x63, E0 | 0x5e },
    { "audionext", E0 | 0x19, E0 | 0x4d },
    { "audioprev", E0 | 0x10, E0 | 0x15 },
    { "audiostop", E0 | 0x24, E0 | 0x3b },
    { "audioplay", E0 | 0x22, E0 | 0x34 },
    { "audiomute", E0 | 0x20, E0 | 0x23 },
    { "volumeup", E0 | 0x30, E0 | 0x32 },
    { "volumedown", E0 | 0x2e, E0 | 0x21 },
    { "mediaselect", E0 | 0x6d, E0 | 0x50 },
    { "mail", E0 | 0x6c, E0 | 0x48 },
    { "calculator", E0 | 0x21, E0 | 0x2b },
    { "computer", E0 | 0x6b, E0 | 0x40 },
    { "ac_home", E0 | 0x32, E0 | 0x3a },
    { "ac_back", E0 | 0x6a, E0 | 0x38 },
    { "ac_forward", E0 | 0x69, E0 | 0x30 },
    { "ac_refresh", E0 | 0x67, E0 | 0x20 },
    { "ac_bookmarks", E0 | 0x66, E0 | 0x18 },
    { "lang1", 0, 0 },
    { "lang2", 0, 0 },
    { "f13", 0, 0 },
    { "f14", 0, 0 },
    { "f15", 0, 0 },
    { "f16", 0, 0 },
    { "f17", 0, 0 },
    { "f18", 0, 0 },
    { "f19", 0, 0 },
    { "f20", 0, 0 },
    { "f21", 0, 0 },
    { "f22", 0, 0 },
    { "f23", 0, 0 },
    { "f24", 0, 0 },
};

#undef E0

size_t input_key_count(void)
{
    return G_N_ELEMENTS(input_keys);
}

const InputKeyInfo *input_key_info(InputKey key)
{
    return key < G_N_ELEMENTS(input_keys) ? &input_keys[key] : NULL;
}

InputKey input_key_from_qcode(const char *qcode)
{
    if (!qcode) {
        return 0;
    }
    for (InputKey k = 1; k < G_N_ELEMENTS(input_keys); k++) {
        if (!strcmp(input_keys[k].qcode, qcode)) {
            return k;
        }
    }
    return 0;
}

InputKey input_key_from_number(int64_t number)
{
    uint16_t want;

    if (number <= 0 || number > 0xff) {
        return 0;
    }
    want = (number & 0x80 ? INPUT_SC_E0 : 0) | (number & 0x7f);
    for (InputKey k = 1; k < G_N_ELEMENTS(input_keys); k++) {
        if (input_keys[k].set1 == want) {
            return k;
        }
    }
    return 0;
}

static bool input_key_is(InputKey key, const char *qcode)
{
    return key < G_N_ELEMENTS(input_keys) &&
           !strcmp(input_keys[key].qcode, qcode);
}

size_t input_key_scancodes(InputKey key, bool down, int set, uint8_t *buf)
{
    const InputKeyInfo *k = input_key_info(key);
    uint16_t code;
    size_t n = 0;

    if (!k || (set != 1 && set != 2)) {
        return 0;
    }
    if (input_key_is(key, "pause")) {
        /* Pause has no break code; its make is a fixed 0xE1 sequence. */
        static const uint8_t pause1[] = { 0xe1, 0x1d, 0x45,
                                          0xe1, 0x9d, 0xc5 };
        static const uint8_t pause2[] = { 0xe1, 0x14, 0x77,
                                          0xe1, 0xf0, 0x14, 0xf0, 0x77 };

        if (!down) {
            return 0;
        }
        if (set == 1) {
            memcpy(buf, pause1, sizeof(pause1));
            return sizeof(pause1);
        }
        memcpy(buf, pause2, sizeof(pause2));
        return sizeof(pause2);
    }
    code = set == 1 ? k->set1 : k->set2;
    if (!(code & 0xff)) {
        return 0;
    }
    if (code & INPUT_SC_E0) {
        buf[n++] = 0xe0;
    }
    if (set == 1) {
        buf[n++] = (code & 0xff) | (down ? 0 : 0x80);
    } else {
        if (!down) {
            buf[n++] = 0xf0;
        }
        buf[n++] = code & 0xff;
    }
    return n;
}

/* ---- receivers --------------------------------------------------------- */

typedef struct InputKeyboard {
    InputKeyHandler *fn;
    void *opaque;
} InputKeyboard;

static GSList *input_keyboards;

void input_keyboard_register(InputKeyHandler *fn, void *opaque)
{
    InputKeyboard *kb = g_new0(InputKeyboard, 1);

    kb->fn = fn;
    kb->opaque = opaque;
    input_keyboards = g_slist_append(input_keyboards, kb);
}

void input_keyboard_unregister(void *opaque)
{
    for (GSList *l = input_keyboards; l; l = l->next) {
        InputKeyboard *kb = l->data;

        if (kb->opaque == opaque) {
            input_keyboards = g_slist_delete_link(input_keyboards, l);
            g_free(kb);
            return;
        }
    }
}

void input_key_event_except(InputKey key, bool down, InputKeyHandler *except)
{
    trace_input_key_event(input_key_info(key) ? input_key_info(key)->qcode
                                              : "?", down);
    for (GSList *l = input_keyboards; l; l = l->next) {
        InputKeyboard *kb = l->data;

        if (kb->fn != except) {
            kb->fn(kb->opaque, key, down);
        }
    }
}

void input_key_event(InputKey key, bool down)
{
    input_key_event_except(key, down, NULL);
}

/* ---- send-key ---------------------------------------------------------- */

/* Keys pressed by send-key, released when their hold time is over. */
typedef struct InputRelease {
    QEMUTimer *timer;
    InputKey *keys;             /* released from the last to the first */
    size_t n;
} InputRelease;

static GSList *input_pending_releases;

static void input_release_keys(void *opaque)
{
    InputRelease *r = opaque;

    for (size_t i = r->n; i-- > 0;) {
        input_key_event(r->keys[i], false);
    }
    input_pending_releases = g_slist_remove(input_pending_releases, r);
    timer_free(r->timer);
    g_free(r->keys);
    g_free(r);
}

void input_send_keys(const InputKey *keys, size_t n, int64_t hold_ms)
{
    InputRelease *r = g_new0(InputRelease, 1);

    for (size_t i = 0; i < n; i++) {
        input_key_event(keys[i], true);
    }
    r->keys = g_memdup2(keys, n * sizeof(*keys));
    r->n = n;
    r->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, input_release_keys, r);
    input_pending_releases = g_slist_prepend(input_pending_releases, r);
    timer_mod_ns(r->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                 hold_ms * 1000000);
}

/* Keys held at once: HMP's limit, and a bound for one QMP command. */
#define INPUT_HMP_KEY_MAX 16
#define INPUT_SEND_KEY_MAX 256
/* An hour: longer holds are surely a mistake. */
#define INPUT_HOLD_MAX_MS (3600 * 1000)

static bool input_check_hold(int64_t hold_ms, Error **errp)
{
    if (hold_ms < 0 || hold_ms > INPUT_HOLD_MAX_MS) {
        error_setg(errp, "Parameter 'hold-time' must be between 0 and %d "
                   "milliseconds", INPUT_HOLD_MAX_MS);
        return false;
    }
    return true;
}

static void qmp_send_key(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_object_get_array_member(args, "keys");
    unsigned n = json_array_get_length(list);
    int64_t hold = json_object_has_member(args, "hold-time")
                   ? json_object_get_int_member(args, "hold-time") : 100;
    g_autofree InputKey *keys = NULL;

    if (!n) {
        error_setg(errp, "Parameter 'keys' must not be empty");
        return;
    }
    if (n > INPUT_SEND_KEY_MAX) {
        error_setg(errp, "Parameter 'keys': at most %d keys can be sent at "
                   "once", INPUT_SEND_KEY_MAX);
        return;
    }
    if (!input_check_hold(hold, errp)) {
        return;
    }
    keys = g_new(InputKey, n);
    for (unsigned i = 0; i < n; i++) {
        JsonNode *node = json_array_get_element(list, i);
        JsonObject *kv;
        const char *type;
        JsonNode *data;

        if (!JSON_NODE_HOLDS_OBJECT(node)) {
            error_setg(errp, "Invalid parameter type for 'keys[%u]', "
                       "expected: KeyValue", i);
            return;
        }
        kv = json_node_get_object(node);
        data = json_object_get_member(kv, "data");
        type = json_object_has_member(kv, "type") &&
               JSON_NODE_HOLDS_VALUE(json_object_get_member(kv, "type")) &&
               json_node_get_value_type(json_object_get_member(kv, "type"))
               == G_TYPE_STRING
               ? json_object_get_string_member(kv, "type") : NULL;
        if (!type) {
            error_setg(errp, "Parameter 'keys[%u].type' is missing", i);
            return;
        }
        if (!data) {
            error_setg(errp, "Parameter 'keys[%u].data' is missing", i);
            return;
        }
        if (!strcmp(type, "qcode")) {
            const char *q;

            if (!JSON_NODE_HOLDS_VALUE(data) ||
                json_node_get_value_type(data) != G_TYPE_STRING) {
                error_setg(errp, "Invalid parameter type for "
                           "'keys[%u].data', expected: string", i);
                return;
            }
            q = json_node_get_string(data);
            keys[i] = input_key_from_qcode(q);
            if (!keys[i]) {
                error_setg(errp, "Parameter 'keys[%u].data' does not accept "
                           "value '%s'", i, q);
                return;
            }
        } else if (!strcmp(type, "number")) {
            int64_t num;

            if (!JSON_NODE_HOLDS_VALUE(data) ||
                json_node_get_value_type(data) != G_TYPE_INT64) {
                error_setg(errp, "Invalid parameter type for "
                           "'keys[%u].data', expected: integer", i);
                return;
            }
            num = json_node_get_int(data);
            keys[i] = input_key_from_number(num);
            if (!keys[i]) {
                error_setg(errp, "Parameter 'keys[%u].data': no key has "
                           "number %" PRId64, i, num);
                return;
            }
        } else {
            error_setg(errp, "Parameter 'keys[%u].type' does not accept "
                       "value '%s'", i, type);
            return;
        }
    }
    input_send_keys(keys, n, hold);
}

bool input_hmp_sendkey(const char *spec, int64_t hold_ms, Error **errp)
{
    g_auto(GStrv) names = g_strsplit(spec, "-", -1);
    InputKey keys[INPUT_HMP_KEY_MAX];
    size_t n = 0;

    if (!input_check_hold(hold_ms, errp)) {
        return false;
    }
    for (size_t i = 0; names[i]; i++) {
        const char *name = names[i];
        InputKey k;

        if (n == INPUT_HMP_KEY_MAX) {
            error_setg(errp, "too many keys (at most %d)",
                       INPUT_HMP_KEY_MAX);
            return false;
        }
        if (!*name) {
            error_setg(errp, "invalid parameter: empty key name in '%s'",
                       spec);
            return false;
        }
        if (g_str_has_prefix(name, "0x")) {
            guint64 num;

            if (!g_ascii_string_to_unsigned(name + 2, 16, 0, 0xff, &num,
                                            NULL)) {
                error_setg(errp, "invalid parameter: %s", name);
                return false;
            }
            k = input_key_from_number(num);
        } else {
            k = input_key_from_qcode(name);
        }
        if (!k) {
            error_setg(errp, "invalid parameter: %s", name);
            return false;
        }
        keys[n++] = k;
    }
    if (!n) {
        error_setg(errp, "invalid parameter: no keys");
        return false;
    }
    input_send_keys(keys, n, hold_ms);
    return true;
}

static void __attribute__((constructor)) input_qmp_register(void)
{
    qmp_register_command_args("send-key", qmp_send_key,
                              "keys:a *hold-time:i", 0);
}
