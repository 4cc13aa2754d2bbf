/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qga-chat SOCKET TIMEOUT JSON...: what libvirt does with a guest agent
 * channel, for the nested device test (busybox's nc has no UNIX
 * sockets).  Connects to the chardev's UNIX socket (retrying while it
 * does not exist yet) and, for each JSON command, sends it with a
 * newline and prints the line that comes back.  Exits 1 when a reply
 * does not come within TIMEOUT seconds or on error; with TIMEOUT 0 the
 * commands are only sent (guest-shutdown has no reply).
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One reply line into line[]; false on timeout or a closed socket. */
static bool read_line(int fd, char *line, size_t size, double deadline)
{
    size_t len = 0;

    while (now() < deadline) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        char c;
        ssize_t r;

        if (poll(&pfd, 1, 200) <= 0) {
            continue;
        }
        r = read(fd, &c, 1);
        if (r <= 0) {
            fprintf(stderr, "qga-chat: connection closed\n");
            return false;
        }
        if (c == '\n') {
            line[len] = 0;
            return true;
        }
        if (len < size - 1) {
            line[len++] = c;
        }
    }
    fprintf(stderr, "qga-chat: no reply in time\n");
    return false;
}

int main(int argc, char **argv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    double timeout = argc > 2 ? atof(argv[2]) : 0;
    static char line[1 << 20];
    double deadline;
    int fd = -1;

    if (argc < 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "usage: qga-chat SOCKET TIMEOUT JSON...\n");
        return 2;
    }
    strcpy(sa.sun_path, argv[1]);
    deadline = now() + (timeout > 0 ? timeout : 30);
    for (;;) {
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            break;
        }
        if (fd >= 0) {
            close(fd);
        }
        if (now() > deadline) {
            perror("qga-chat: connect");
            return 1;
        }
        usleep(100000);
    }
    for (int i = 3; i < argc; i++) {
        if (write(fd, argv[i], strlen(argv[i])) < 0 || write(fd, "\n", 1) < 0) {
            perror("qga-chat: write");
            return 1;
        }
        if (timeout <= 0) {
            continue;
        }
        if (!read_line(fd, line, sizeof(line), now() + timeout)) {
            return 1;
        }
        printf("%s\n", line);
        fflush(stdout);
    }
    close(fd);
    return 0;
}
