/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The key table behind send-key: qcode and number look-up, and the
 * scancodes in sets 1 and 2 (make, break, 0xE0 keys, Pause), checked
 * against the i8042's set 2 -> set 1 translation being a function.
 */
#include "qemu/osdep.h"
#include "hw/input/input.h"

static void assert_codes(const char *qcode, bool down, int set,
                         const uint8_t *want, size_t n)
{
    uint8_t buf[8];
    InputKey k = input_key_from_qcode(qcode);

    g_assert_cmpuint(k, !=, 0);
    g_assert_cmpuint(input_key_scancodes(k, down, set, buf), ==, n);
    g_assert_cmpmem(buf, n, want, n);
}

static void test_lookup(void)
{
    g_assert_cmpuint(input_key_from_qcode("nosuchkey"), ==, 0);
    g_assert_cmpuint(input_key_from_qcode(""), ==, 0);
    g_assert_cmpuint(input_key_from_qcode(NULL), ==, 0);
    /* "unmapped" is QKeyCode 0 and is not a key one can send. */
    g_assert_cmpuint(input_key_from_qcode("unmapped"), ==, 0);
    g_assert_cmpstr(input_key_info(input_key_from_qcode("ctrl"))->qcode, ==,
                    "ctrl");
    /* Numbers are XT codes; 0x80 | code for the 0xE0 keys. */
    g_assert_cmpuint(input_key_from_number(0x1d), ==,
                     input_key_from_qcode("ctrl"));
    g_assert_cmpuint(input_key_from_number(0x9d), ==,
                     input_key_from_qcode("ctrl_r"));
    g_assert_cmpuint(input_key_from_number(0xd3), ==,
                     input_key_from_qcode("delete"));
    g_assert_cmpuint(input_key_from_number(0), ==, 0);
    g_assert_cmpuint(input_key_from_number(-1), ==, 0);
    g_assert_cmpuint(input_key_from_number(0x100), ==, 0);
    g_assert_null(input_key_info(input_key_count()));
}

static void test_names_unique(void)
{
    for (InputKey a = 0; a < input_key_count(); a++) {
        for (InputKey b = a + 1; b < input_key_count(); b++) {
            g_assert_cmpstr(input_key_info(a)->qcode, !=,
                            input_key_info(b)->qcode);
        }
        if (a) {
            g_assert_cmpuint(input_key_from_qcode(input_key_info(a)->qcode),
                             ==, a);
        }
    }
}

static void test_ctrl_alt_delete(void)
{
    static const uint8_t ctrl1[] = { 0x1d }, ctrl1_up[] = { 0x9d };
    static const uint8_t alt1[] = { 0x38 }, alt1_up[] = { 0xb8 };
    static const uint8_t del1[] = { 0xe0, 0x53 }, del1_up[] = { 0xe0, 0xd3 };
    static const uint8_t ctrl2[] = { 0x14 }, ctrl2_up[] = { 0xf0, 0x14 };
    static const uint8_t del2[] = { 0xe0, 0x71 };
    static const uint8_t del2_up[] = { 0xe0, 0xf0, 0x71 };

    assert_codes("ctrl", true, 1, ctrl1, 1);
    assert_codes("ctrl", false, 1, ctrl1_up, 1);
    assert_codes("alt", true, 1, alt1, 1);
    assert_codes("alt", false, 1, alt1_up, 1);
    assert_codes("delete", true, 1, del1, 2);
    assert_codes("delete", false, 1, del1_up, 2);
    assert_codes("ctrl", true, 2, ctrl2, 1);
    assert_codes("ctrl", false, 2, ctrl2_up, 2);
    assert_codes("delete", true, 2, del2, 2);
    assert_codes("delete", false, 2, del2_up, 3);
}

static void test_pause(void)
{
    static const uint8_t p1[] = { 0xe1, 0x1d, 0x45, 0xe1, 0x9d, 0xc5 };
    static const uint8_t p2[] = { 0xe1, 0x14, 0x77, 0xe1, 0xf0, 0x14,
                                  0xf0, 0x77 };
    uint8_t buf[8];

    assert_codes("pause", true, 1, p1, sizeof(p1));
    assert_codes("pause", true, 2, p2, sizeof(p2));
    /* It has no break code. */
    g_assert_cmpuint(input_key_scancodes(input_key_from_qcode("pause"),
                                         false, 1, buf), ==, 0);
    /* Nor is there a set 3 here. */
    g_assert_cmpuint(input_key_scancodes(input_key_from_qcode("a"),
                                         true, 3, buf), ==, 0);
}

/*
 * The controller translates each set 2 byte to one set 1 byte, whatever
 * the 0xE0 prefix: so across the whole table a set 2 code must always
 * go with the same set 1 code, and the 0xE0 flag must agree.
 */
static void test_translation_consistent(void)
{
    int xlat[256];

    for (int i = 0; i < 256; i++) {
        xlat[i] = -1;
    }
    for (InputKey k = 1; k < input_key_count(); k++) {
        const InputKeyInfo *info = input_key_info(k);
        uint8_t s1 = info->set1 & 0xff, s2 = info->set2 & 0xff;

        if (!s1 && !s2) {
            continue;
        }
        g_assert_true(s1 && s2);
        g_assert_cmphex(info->set1 & INPUT_SC_E0, ==,
                        info->set2 & INPUT_SC_E0);
        g_assert_cmphex(s1, <, 0x80);
        if (xlat[s2] >= 0) {
            g_assert_cmphex(xlat[s2], ==, s1);
        }
        xlat[s2] = s1;
    }
    /* A few of the translation's well-known pairs. */
    g_assert_cmphex(xlat[0x1c], ==, 0x1e);      /* a */
    g_assert_cmphex(xlat[0x5a], ==, 0x1c);      /* enter */
    g_assert_cmphex(xlat[0x76], ==, 0x01);      /* esc */
    g_assert_cmphex(xlat[0x83], ==, 0x41);      /* f7 */
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/input/keys/lookup", test_lookup);
    g_test_add_func("/input/keys/names-unique", test_names_unique);
    g_test_add_func("/input/keys/ctrl-alt-delete", test_ctrl_alt_delete);
    g_test_add_func("/input/keys/pause", test_pause);
    g_test_add_func("/input/keys/translation-consistent",
                    test_translation_consistent);
    return g_test_run();
}
