/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Main loop, timers, bottom halves and event notifiers.  Virtual-clock
 * tests use manual mode, so nothing here depends on how fast we run.
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/event_notifier.h"
#include <pthread.h>

typedef struct Fired {
    GString *order;
    char tag;
    int64_t seen_clock;
    QEMUTimer *rearm;       /* re-arm this timer from the callback */
    int64_t rearm_at;
} Fired;

static void timer_cb(void *opaque)
{
    Fired *f = opaque;

    g_string_append_c(f->order, f->tag);
    f->seen_clock = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (f->rearm) {
        timer_mod_ns(f->rearm, f->rearm_at);
        f->rearm = NULL;
    }
}

static void test_virtual_warp_order(void)
{
    g_autoptr(GString) order = g_string_new(NULL);
    Fired fa = { order, 'a' }, fb = { order, 'b' }, fc = { order, 'c' };
    Fired fd = { order, 'd' };
    QEMUTimer *a, *b, *c, *d;
    int64_t base;

    qemu_clock_virtual_set_manual(true);
    base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    a = timer_new_ns(QEMU_CLOCK_VIRTUAL, timer_cb, &fa);
    b = timer_new_ns(QEMU_CLOCK_VIRTUAL, timer_cb, &fb);
    c = timer_new_ns(QEMU_CLOCK_VIRTUAL, timer_cb, &fc);
    d = timer_new_ns(QEMU_CLOCK_VIRTUAL, timer_cb, &fd);
    timer_mod_ns(c, base + 300);
    timer_mod_ns(a, base + 100);
    timer_mod_ns(b, base + 200);
    timer_mod_ns(d, base + 200);    /* same deadline as b: arming order */
    /* a re-arms c earlier, to 150: it must run before b. */
    fa.rearm = c;
    fa.rearm_at = base + 150;

    g_assert_cmpint(qemu_clock_next_expire_ns(QEMU_CLOCK_VIRTUAL), ==,
                    base + 100);
    qtest_clock_warp(base + 99);
    g_assert_cmpstr(order->str, ==, "");
    g_assert_cmpint(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), ==, base + 99);

    qtest_clock_warp(base + 1000);
    g_assert_cmpstr(order->str, ==, "acbd");
    g_assert_cmpint(fa.seen_clock, ==, base + 100);
    g_assert_cmpint(fc.seen_clock, ==, base + 150);
    g_assert_cmpint(fb.seen_clock, ==, base + 200);
    g_assert_cmpint(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), ==, base + 1000);
    g_assert_false(timer_pending(a));
    g_assert_cmpint(qemu_clock_next_expire_ns(QEMU_CLOCK_VIRTUAL), ==, -1);

    /* Deleted timers never fire; backwards warps do nothing. */
    timer_mod_ns(a, base + 2000);
    timer_del(a);
    qtest_clock_warp(base + 3000);
    qtest_clock_warp(base + 10);
    g_assert_cmpstr(order->str, ==, "acbd");
    g_assert_cmpint(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), ==, base + 3000);

    /* ms timers scale their expire time. */
    timer_free(a);
    a = timer_new_ms(QEMU_CLOCK_VIRTUAL, timer_cb, &fa);
    timer_mod(a, 5);
    g_assert_cmpint(timer_expire_time_ns(a), ==, 5 * SCALE_MS);
    timer_free(a);
    timer_free(b);
    timer_free(c);
    timer_free(d);
    qemu_clock_virtual_set_manual(false);
}

static void test_virtual_stopped_clock(void)
{
    int64_t t0, t1;

    qemu_clock_virtual_stop();
    t0 = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    g_usleep(2000);
    t1 = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    /* Stopped means frozen, whatever the host clock did. */
    g_assert_cmpint(t0, ==, t1);
    qemu_clock_virtual_start();
    g_assert_cmpint(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), >=, t1);
    qemu_clock_virtual_stop();
}

static void quit_cb(void *opaque)
{
    *(int *)opaque += 1;
}

static void test_realtime_timer_in_loop(void)
{
    int fired = 0;
    QEMUTimer *t = timer_new_ns(QEMU_CLOCK_REALTIME, quit_cb, &fired);

    bql_lock();
    timer_mod_ns(t, qemu_clock_get_ns(QEMU_CLOCK_REALTIME) + SCALE_MS);
    while (!fired) {
        main_loop_wait(true);
    }
    g_assert_cmpint(fired, ==, 1);
    g_assert_false(timer_pending(t));
    bql_unlock();
    timer_free(t);
}

typedef struct BHThread {
    QEMUBH *bh;
    bool lock_seen_free;
} BHThread;

static void *bh_thread_fn(void *opaque)
{
    BHThread *bt = opaque;

    /* The loop sleeps without the BQL, so this must not deadlock. */
    bql_lock();
    bt->lock_seen_free = true;
    bql_unlock();
    qemu_bh_schedule(bt->bh);
    return NULL;
}

static void test_bh_from_thread(void)
{
    int ran = 0;
    BHThread bt = { 0 };
    pthread_t th;

    bt.bh = qemu_bh_new(quit_cb, &ran);
    bql_lock();
    pthread_create(&th, NULL, bh_thread_fn, &bt);
    while (!ran) {
        main_loop_wait(true);
    }
    pthread_join(th, NULL);
    g_assert_true(bt.lock_seen_free);
    g_assert_cmpint(ran, ==, 1);

    /* Scheduling twice before the loop runs gives one call. */
    qemu_bh_schedule(bt.bh);
    qemu_bh_schedule(bt.bh);
    main_loop_wait(false);
    main_loop_wait(false);
    g_assert_cmpint(ran, ==, 2);

    /* Cancelled or deleted BHs do not run. */
    qemu_bh_schedule(bt.bh);
    qemu_bh_cancel(bt.bh);
    main_loop_wait(false);
    g_assert_cmpint(ran, ==, 2);
    qemu_bh_schedule(bt.bh);
    qemu_bh_delete(bt.bh);
    main_loop_wait(false);
    g_assert_cmpint(ran, ==, 2);
    bql_unlock();
}

static int notified;

static void notifier_handler(EventNotifier *e)
{
    g_assert_true(event_notifier_test_and_clear(e));
    notified++;
}

static void test_event_notifier(void)
{
    EventNotifier e;

    g_assert_cmpint(event_notifier_init(&e, 0), ==, 0);
    g_assert_false(event_notifier_test_and_clear(&e));
    g_assert_cmpint(event_notifier_set(&e), ==, 0);
    g_assert_cmpint(event_notifier_set(&e), ==, 0);
    g_assert_true(event_notifier_test_and_clear(&e));
    g_assert_false(event_notifier_test_and_clear(&e));

    bql_lock();
    event_notifier_set_handler(&e, notifier_handler);
    event_notifier_set(&e);
    while (!notified) {
        main_loop_wait(true);
    }
    g_assert_cmpint(notified, ==, 1);
    /* Removing the handler stops the dispatch. */
    event_notifier_set_handler(&e, NULL);
    event_notifier_set(&e);
    main_loop_wait(false);
    g_assert_cmpint(notified, ==, 1);
    bql_unlock();
    event_notifier_cleanup(&e);
    event_notifier_cleanup(&e);     /* idempotent */

    g_assert_cmpint(event_notifier_init(&e, 1), ==, 0);
    g_assert_true(event_notifier_test_and_clear(&e));
    event_notifier_cleanup(&e);
}

static int fd_reads;
static int fd_pipe[2];

static void fd_read_handler(void *opaque)
{
    char c;

    g_assert_cmpint(read(fd_pipe[0], &c, 1), ==, 1);
    g_assert_cmpint(c, ==, 'x');
    fd_reads++;
    /* Removing itself from inside the handler is allowed. */
    qemu_set_fd_handler(fd_pipe[0], NULL, NULL, NULL);
}

static void test_fd_handler(void)
{
    g_assert_cmpint(pipe(fd_pipe), ==, 0);
    bql_lock();
    qemu_set_fd_handler(fd_pipe[0], fd_read_handler, NULL, NULL);
    g_assert_cmpint(write(fd_pipe[1], "xx", 2), ==, 2);
    while (!fd_reads) {
        main_loop_wait(true);
    }
    main_loop_wait(false);
    g_assert_cmpint(fd_reads, ==, 1);
    bql_unlock();
    close(fd_pipe[0]);
    close(fd_pipe[1]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qemu_init_main_loop();
    g_test_add_func("/main-loop/timer/virtual-warp-fires-in-order",
                    test_virtual_warp_order);
    g_test_add_func("/main-loop/timer/virtual-frozen-while-stopped",
                    test_virtual_stopped_clock);
    g_test_add_func("/main-loop/timer/realtime-fires-in-loop",
                    test_realtime_timer_in_loop);
    g_test_add_func("/main-loop/bh/schedule-from-thread-once",
                    test_bh_from_thread);
    g_test_add_func("/main-loop/event-notifier/set-clear-handler",
                    test_event_notifier);
    g_test_add_func("/main-loop/fd-handler/read-and-self-remove",
                    test_fd_handler);
    return g_test_run();
}
