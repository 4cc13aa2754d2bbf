/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chardev options libvirt writes: logfile=/logappend= (a serial port's
 * <log file=... append=...>), and TCP sockets, raw or telnet, server or
 * client (<serial type='tcp'>), through COM1 driven by port I/O.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "libqtest.h"

#define COM1 0x3f8
#define UART_LSR 5
#define LSR_DR 0x01

static void guest_puts(QTestState *qts, const char *s)
{
    for (; *s; s++) {
        qtest_outb(qts, COM1, (uint8_t)*s);
    }
}

static char *slurp(const char *path)
{
    char *text = NULL;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static void test_logfile(void)
{
    g_autofree char *dir = g_dir_make_tmp("chardev-log-XXXXXX", NULL);
    g_autofree char *log = g_build_filename(dir, "console.log", NULL);
    QTestState *qts;
    char *text;

    /* A pty nobody opened: the log still gets every byte (Nova's
     * console.log works without a client). */
    g_assert_true(g_file_set_contents(log, "old\n", -1, NULL));
    qts = qtest_initf("-machine pc -chardev pty,id=charserial0,logfile=%s,"
                      "logappend=on -serial chardev:charserial0", log);
    guest_puts(qts, "boot line\n");
    qtest_quit(qts);
    text = slurp(log);
    g_assert_cmpstr(text, ==, "old\nboot line\n");
    g_free(text);

    /* logappend off (the default) starts the log afresh. */
    qts = qtest_initf("-machine pc -chardev null,id=c0,logfile=%s "
                      "-serial chardev:c0", log);
    guest_puts(qts, "second\n");
    qtest_quit(qts);
    text = slurp(log);
    g_assert_cmpstr(text, ==, "second\n");
    g_free(text);
    unlink(log);
    rmdir(dir);
}

static int free_port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&a, &len), ==, 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static int tcp_connect(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    return fd;
}

/* Reads until @want bytes arrived (bounded wait). */
static size_t read_n(int fd, uint8_t *buf, size_t want)
{
    size_t got = 0;

    while (got < want) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n;

        if (poll(&p, 1, 30000) != 1) {
            break;
        }
        n = read(fd, buf + got, want - got);
        if (n <= 0) {
            break;
        }
        got += n;
    }
    return got;
}

/* What the guest's UART received, polling its line status. */
static GString *guest_gets(QTestState *qts, size_t want)
{
    GString *s = g_string_new(NULL);

    for (int tries = 0; s->len < want && tries < 3000; tries++) {
        if (qtest_inb(qts, COM1 + UART_LSR) & LSR_DR) {
            g_string_append_c(s, qtest_inb(qts, COM1));
        } else {
            g_usleep(1000);
        }
    }
    return s;
}

static void test_tcp_telnet_server(void)
{
    int port = free_port();
    QTestState *qts = qtest_initf(
        "-machine pc -chardev socket,id=charserial0,host=127.0.0.1,"
        "port=%d,telnet=on,server=on,wait=off "
        "-serial chardev:charserial0", port);
    int fd = tcp_connect(port);
    uint8_t buf[64];
    /* The client agrees, types "ab", a literal 0xff, CR NUL and "c". */
    static const uint8_t typed[] = {
        255, 253, 1, 255, 253, 3, 'a', 255, 250, 31, 0, 80, 0, 24, 255, 240,
        'b', 255, 255, '\r', 0, 'c',
    };
    g_autoptr(GString) rx = NULL;
    JsonNode *ret;

    /* The server's negotiation comes first: IAC WILL ECHO ... */
    g_assert_cmpuint(read_n(fd, buf, 3), ==, 3);
    g_assert_cmpmem(buf, 3, ((uint8_t[]){ 255, 251, 1 }), 3);
    g_assert_cmpuint(read_n(fd, buf, 9), ==, 9);
    g_assert_cmpint(write(fd, typed, sizeof(typed)), ==, sizeof(typed));
    rx = guest_gets(qts, 5);
    g_assert_cmpmem(rx->str, rx->len, "ab\xff\r" "c", 5);
    /* The guest's 0xff reaches the client escaped. */
    qtest_outb(qts, COM1, 'x');
    qtest_outb(qts, COM1, 0xff);
    g_assert_cmpuint(read_n(fd, buf, 3), ==, 3);
    g_assert_cmpmem(buf, 3, "x\xff\xff", 3);
    ret = qtest_qmp_assert_success(qts, "{'execute': 'query-chardev'}");
    {
        JsonArray *a = json_node_get_array(ret);
        g_autofree char *want = g_strdup_printf("telnet:127.0.0.1:%d,"
                                                "server=on", port);
        bool found = false;

        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonObject *o = json_array_get_object_element(a, i);

            found |= !strcmp(json_object_get_string_member(o, "filename"),
                             want);
        }
        g_assert_true(found);
    }
    json_node_unref(ret);
    close(fd);
    qtest_quit(qts);
}

static void test_tcp_raw_client(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), fd;
    struct pollfd p = { .events = POLLIN };
    uint8_t buf[8];
    QTestState *qts;
    g_autoptr(GString) rx = NULL;

    g_assert_cmpint(bind(lfd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    g_assert_cmpint(getsockname(lfd, (struct sockaddr *)&a, &len), ==, 0);
    qts = qtest_initf("-machine pc -chardev socket,id=c0,host=127.0.0.1,"
                      "port=%d,nodelay=on -serial chardev:c0",
                      ntohs(a.sin_port));
    p.fd = lfd;
    g_assert_cmpint(poll(&p, 1, 30000), ==, 1);
    fd = accept(lfd, NULL, NULL);
    g_assert_cmpint(fd, >=, 0);
    /* Raw: bytes pass untouched both ways, 0xff included. */
    qtest_outb(qts, COM1, 0xff);
    qtest_outb(qts, COM1, 'z');
    g_assert_cmpuint(read_n(fd, buf, 2), ==, 2);
    g_assert_cmpmem(buf, 2, "\xffz", 2);
    g_assert_cmpint(write(fd, "\xff\x01", 2), ==, 2);
    rx = guest_gets(qts, 2);
    g_assert_cmpmem(rx->str, rx->len, "\xff\x01", 2);
    close(fd);
    close(lfd);
    qtest_quit(qts);
}

static void test_errors(void)
{
    qtest_assert_start_fails("-accel qtest -display none "
                             "-chardev socket,id=c0,path=/tmp/x.sock,"
                             "server=on,wait=off,telnet=on",
                             "telnet=on needs a TCP socket");
    qtest_assert_start_fails("-accel qtest -display none "
                             "-chardev pty,id=c0,mux=on",
                             "mux=on is not supported");
    qtest_assert_start_fails("-accel qtest -display none "
                             "-chardev pty,id=c0,logappend=on",
                             "logappend needs logfile");
    qtest_assert_start_fails("-accel qtest -display none "
                             "-chardev pty,id=c0,logfile=/nonexistent/d/log",
                             "chardev 'c0': logfile:");
    qtest_assert_start_fails("-accel qtest -display none "
                             "-chardev socket,id=c0,host=127.0.0.1",
                             "'port' is required");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/chardev/logfile", test_logfile);
    g_test_add_func("/chardev/tcp-telnet-server", test_tcp_telnet_server);
    g_test_add_func("/chardev/tcp-raw-client", test_tcp_raw_client);
    g_test_add_func("/chardev/errors", test_errors);
    return g_test_run();
}
