/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See chr-client.h. */
#include "qemu/osdep.h"
#include "chr-client.h"
#include "qemu/main-loop.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

static char *sock_path;
static char *spec;

const char *fuzz_chr_setup(void)
{
    g_autofree char *dir = g_dir_make_tmp("fuzz-chr-XXXXXX", NULL);

    g_assert(dir);
    signal(SIGPIPE, SIG_IGN);
    qemu_init_main_loop();
    bql_lock();
    sock_path = g_build_filename(dir, "s", NULL);
    spec = g_strdup_printf("unix:%s,server=on,wait=off", sock_path);
    return spec;
}

/* Reads and drops whatever the front-end sent back. */
static bool drain(int fd)
{
    char buf[65536];
    ssize_t n;

    do {
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    } while (n > 0);
    return n == 0;      /* peer closed */
}

static void send_pumping(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t n = send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n > 0) {
            data += n;
            size -= n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            return;
        }
        /* Socket buffer full: let the front-end read, and drop replies. */
        main_loop_wait(false);
        drain(fd);
    }
}

void fuzz_chr_session(const char *prefix, const uint8_t *data, size_t size)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int spins;

    g_assert(fd >= 0);
    strcpy(addr.sun_path, sock_path);
    g_assert(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
    if (prefix) {
        send_pumping(fd, (const uint8_t *)prefix, strlen(prefix));
    }
    send_pumping(fd, data, size);
    /* Half-close: the front-end sees EOF after the last byte. */
    shutdown(fd, SHUT_WR);
    for (spins = 0; spins < 1000000; spins++) {
        main_loop_wait(false);
        if (drain(fd)) {
            break;
        }
    }
    close(fd);
    /* Let the chardev notice the hang-up and re-listen. */
    main_loop_wait(false);
    main_loop_wait(false);
}
