/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vhost dirty log (hw/virtio/vhost-log.c): its size for an address
 * range, and a harvest that reports each set bit's page once, in order,
 * and leaves the log clear.
 */
#include "qemu/osdep.h"
#include "hw/virtio/vhost-log.h"

typedef struct Seen {
    GArray *gpas;
} Seen;

static void record(uint64_t gpa, void *opaque)
{
    Seen *s = opaque;

    g_array_append_val(s->gpas, gpa);
}

static void test_words(void)
{
    g_assert_cmpuint(vhost_log_words(0), ==, 1);
    g_assert_cmpuint(vhost_log_words(1), ==, 1);
    g_assert_cmpuint(vhost_log_words(VHOST_LOG_WORD_SPAN), ==, 1);
    g_assert_cmpuint(vhost_log_words(VHOST_LOG_WORD_SPAN + 1), ==, 2);
    /* 4 GiB of guest-physical space: 2^20 pages, 2^14 words. */
    g_assert_cmpuint(vhost_log_words(4ull << 30), ==, 16384);
    /* The end of the 64-bit space does not overflow. */
    g_assert_cmpuint(vhost_log_words(UINT64_MAX), ==,
                     UINT64_MAX / VHOST_LOG_WORD_SPAN + 1);
}

static void test_harvest(void)
{
    uint64_t log[4] = { 0 };
    Seen s = { g_array_new(false, false, sizeof(uint64_t)) };
    static const uint64_t want[] = {
        0, 63 * 0x1000, 64 * 0x1000, 130 * 0x1000, 255 * 0x1000,
    };

    g_assert_cmpuint(vhost_log_harvest(log, 4, record, &s), ==, 0);
    g_assert_cmpuint(s.gpas->len, ==, 0);
    log[0] = 1ull | (1ull << 63);
    log[1] = 1;
    log[2] = 1ull << 2;
    log[3] = 1ull << 63;
    g_assert_cmpuint(vhost_log_harvest(log, 4, record, &s), ==, 5);
    g_assert_cmpuint(s.gpas->len, ==, G_N_ELEMENTS(want));
    for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
        g_assert_cmpuint(g_array_index(s.gpas, uint64_t, i), ==, want[i]);
    }
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmpuint(log[i], ==, 0);
    }
    /* Taken once: a second harvest finds nothing. */
    g_array_set_size(s.gpas, 0);
    g_assert_cmpuint(vhost_log_harvest(log, 4, record, &s), ==, 0);
    /* Only the words given are looked at. */
    log[3] = 1;
    g_assert_cmpuint(vhost_log_harvest(log, 3, record, &s), ==, 0);
    g_assert_cmpuint(log[3], ==, 1);
    g_array_free(s.gpas, true);
}

/* Every bit of a full word, lowest first. */
static void test_full_word(void)
{
    uint64_t log[1] = { UINT64_MAX };
    Seen s = { g_array_new(false, false, sizeof(uint64_t)) };

    g_assert_cmpuint(vhost_log_harvest(log, 1, record, &s), ==, 64);
    for (unsigned i = 0; i < 64; i++) {
        g_assert_cmpuint(g_array_index(s.gpas, uint64_t, i), ==,
                         i * VHOST_LOG_PAGE_SIZE);
    }
    g_array_free(s.gpas, true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vhost-log/words", test_words);
    g_test_add_func("/vhost-log/harvest", test_harvest);
    g_test_add_func("/vhost-log/full-word", test_full_word);
    return g_test_run();
}
