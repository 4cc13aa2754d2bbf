/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qemu/peer-mem.h: shrink seals and the SIGBUS guard, against files that
 * this test shrinks under its own mappings.
 */
#include "qemu/osdep.h"
#include <setjmp.h>
#include <sys/wait.h>
#include "qemu/peer-mem.h"

#define MAP_LEN 0x4000

/* The SIGBUS handler that was there before the guard's (see main()). */
static sigjmp_buf prev_jmp;
static volatile sig_atomic_t prev_calls;

static void prev_handler(int sig, siginfo_t *info, void *uc)
{
    prev_calls++;
    siglongjmp(prev_jmp, 1);
}

static int tmpfile_of(size_t size)
{
    g_autofree char *name = NULL;
    int fd = g_file_open_tmp("peer-mem-XXXXXX", &name, NULL);

    g_assert_cmpint(fd, >=, 0);
    unlink(name);
    g_assert_cmpint(ftruncate(fd, size), ==, 0);
    return fd;
}

static uint8_t *map_of(int fd)
{
    void *p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    g_assert_true(p != MAP_FAILED);
    return p;
}

static void test_seal(void)
{
    int sealable = memfd_create("sealable", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int plain = memfd_create("plain", MFD_CLOEXEC);
    int file = tmpfile_of(MAP_LEN);

    g_assert_cmpint(sealable, >=, 0);
    g_assert_cmpint(plain, >=, 0);
    g_assert_cmpint(ftruncate(sealable, MAP_LEN), ==, 0);
    g_assert_true(qemu_peer_fd_seal_shrink(sealable));
    g_assert_cmpint(ftruncate(sealable, 0), ==, -1);
    g_assert_cmpint(errno, ==, EPERM);
    /* Growing is still the owner's business; sealing twice is fine. */
    g_assert_cmpint(ftruncate(sealable, 2 * MAP_LEN), ==, 0);
    g_assert_true(qemu_peer_fd_seal_shrink(sealable));

    g_assert_false(qemu_peer_fd_seal_shrink(plain));
    g_assert_false(qemu_peer_fd_seal_shrink(file));
    g_assert_cmpint(ftruncate(plain, 0), ==, 0);

    /* Already sealed, seals then sealed: still reported as safe. */
    close(sealable);
    sealable = memfd_create("sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    g_assert_cmpint(fcntl(sealable, F_ADD_SEALS,
                          F_SEAL_SHRINK | F_SEAL_SEAL), ==, 0);
    g_assert_true(qemu_peer_fd_seal_shrink(sealable));
    close(sealable);
    close(plain);
    close(file);
}

static void test_guard_repairs_and_flags(void)
{
    int fd = tmpfile_of(MAP_LEN);
    uint8_t *p = map_of(fd);
    int slot;

    memset(p, 0x5a, MAP_LEN);
    slot = qemu_peer_mem_guard(p, MAP_LEN);
    g_assert_cmpint(slot, >=, 0);
    g_assert_false(qemu_peer_mem_faulted(slot));
    /* Pages we still have are untouched by the guard. */
    g_assert_cmpuint(p[0x10], ==, 0x5a);
    g_assert_false(qemu_peer_mem_faulted(slot));

    g_assert_cmpint(ftruncate(fd, 0x1000), ==, 0);
    g_assert_cmpuint(p[0x10], ==, 0x5a);
    /* A read and a write past the new end complete on zero pages. */
    g_assert_cmpuint(p[0x2000], ==, 0);
    g_assert_true(qemu_peer_mem_faulted(slot));
    p[0x3ff0] = 7;
    g_assert_cmpuint(p[0x3ff0], ==, 7);
    g_assert_cmpint(prev_calls, ==, 0);

    qemu_peer_mem_unguard(slot);
    g_assert_false(qemu_peer_mem_faulted(-1));
    munmap(p, MAP_LEN);
    close(fd);
}

/* A fault outside every guarded range reaches the previous handler. */
static void test_guard_chains_other_faults(void)
{
    int fd = tmpfile_of(MAP_LEN);
    uint8_t *guarded = map_of(fd);
    int fd2 = tmpfile_of(MAP_LEN);
    uint8_t *other = map_of(fd2);
    volatile uint8_t *victim = other + 0x2000;
    int slot = qemu_peer_mem_guard(guarded, MAP_LEN);

    g_assert_cmpint(slot, >=, 0);
    g_assert_cmpint(ftruncate(fd2, 0), ==, 0);
    prev_calls = 0;
    if (!sigsetjmp(prev_jmp, 1)) {
        (void)*victim;
        g_assert_not_reached();
    }
    g_assert_cmpint(prev_calls, ==, 1);
    g_assert_false(qemu_peer_mem_faulted(slot));

    /* An unguarded mapping is no longer repaired either. */
    qemu_peer_mem_unguard(slot);
    g_assert_cmpint(ftruncate(fd, 0), ==, 0);
    if (!sigsetjmp(prev_jmp, 1)) {
        (void)*(volatile uint8_t *)guarded;
        g_assert_not_reached();
    }
    g_assert_cmpint(prev_calls, ==, 2);
    prev_calls = 0;
    munmap(guarded, MAP_LEN);
    munmap(other, MAP_LEN);
    close(fd);
    close(fd2);
}

static void test_guard_slots_run_out(void)
{
    int slots[QEMU_PEER_MEM_GUARD_SLOTS];
    uint8_t *p = mmap(NULL, 0x1000, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);

    g_assert_true(p != MAP_FAILED);
    for (int i = 0; i < QEMU_PEER_MEM_GUARD_SLOTS; i++) {
        slots[i] = qemu_peer_mem_guard(p, 0x1000);
        g_assert_cmpint(slots[i], >=, 0);
    }
    g_assert_cmpint(qemu_peer_mem_guard(p, 0x1000), ==, -ENOSPC);
    qemu_peer_mem_unguard(slots[7]);
    slots[7] = qemu_peer_mem_guard(p, 0x1000);
    g_assert_cmpint(slots[7], ==, 7);
    for (int i = 0; i < QEMU_PEER_MEM_GUARD_SLOTS; i++) {
        qemu_peer_mem_unguard(slots[i]);
    }
    munmap(p, 0x1000);
}

/* With the default action before us, an unguarded fault still kills. */
static void test_guard_default_action_kills(void)
{
    if (g_test_subprocess()) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        int fd = tmpfile_of(MAP_LEN);
        uint8_t *p = map_of(fd);
        uint8_t *q = map_of(fd);

        sigemptyset(&dfl.sa_mask);
        sigaction(SIGBUS, &dfl, NULL);
        g_assert_cmpint(qemu_peer_mem_guard(p, MAP_LEN), >=, 0);
        g_assert_cmpint(ftruncate(fd, 0), ==, 0);
        g_assert_cmpuint(p[0x1000], ==, 0);
        (void)*(volatile uint8_t *)(q + 0x1000);
        exit(0);
    }
    g_test_trap_subprocess(NULL, 0, 0);
    g_test_trap_assert_failed();
}

int main(int argc, char **argv)
{
    struct sigaction sa = {
        .sa_sigaction = prev_handler,
        .sa_flags = SA_SIGINFO,
    };

    g_test_init(&argc, &argv, NULL);
    /* Installed before the guard's, as a sanitizer's would be. */
    if (!g_test_subprocess()) {
        sigemptyset(&sa.sa_mask);
        g_assert_cmpint(sigaction(SIGBUS, &sa, NULL), ==, 0);
    }
    g_test_add_func("/peer-mem/seal/shrink-sealed-when-possible", test_seal);
    g_test_add_func("/peer-mem/guard/repairs-and-flags",
                    test_guard_repairs_and_flags);
    g_test_add_func("/peer-mem/guard/chains-other-faults",
                    test_guard_chains_other_faults);
    g_test_add_func("/peer-mem/guard/slots-run-out",
                    test_guard_slots_run_out);
    g_test_add_func("/peer-mem/guard/default-action-kills",
                    test_guard_default_action_kills);
    return g_test_run();
}
