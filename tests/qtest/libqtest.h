/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqtest: starts a conduit-system-* binary under "-accel qtest" and
 * drives it over the qtest line protocol and QMP.
 *
 * The binary is $QTEST_BINARY, or the x86_64 binary of the build tree.
 * Every wait has a timeout ($QTEST_TIMEOUT seconds, default 60); a
 * timeout, a protocol error or the child dying fails the test with
 * g_error() after killing the child.  Children are killed when the test
 * process exits or dies (PR_SET_PDEATHSIG).
 *
 * QMP helpers take printf-style JSON; single quotes may be used for JSON
 * strings to avoid escaping ("{'execute': 'stop'}").
 */
#ifndef LIBQTEST_H
#define LIBQTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <glib.h>
#include <json-glib/json-glib.h>

typedef struct QTestState QTestState;

/* Starts the binary with "-qtest ... -qmp ... -accel qtest -display none"
 * followed by @extra_args (split on spaces, shell quotes honoured). */
QTestState *qtest_init(const char *extra_args);
QTestState *qtest_initf(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Kills the child (if alive), reaps it and frees @s. */
void qtest_quit(QTestState *s);
/*
 * Waits for the child to exit (after "quit" or a guest shutdown) and
 * returns its exit status as from waitpid (use WIFEXITED/WEXITSTATUS).
 * @s stays valid for qtest_quit().
 */
int qtest_wait_exit(QTestState *s);
/* True while the child runs. */
bool qtest_probe_child(QTestState *s);
/* Everything the child printed on stderr so far (after it exited: all). */
const char *qtest_get_stderr(QTestState *s);

/*
 * Runs the binary with @args (no qtest/qmp sockets added), waits for it
 * to exit and returns its waitpid status; *stderr_text (if non-NULL)
 * receives its stderr, *stdout_text its stdout (caller frees).
 */
int qtest_run_expect_fail(const char *args, char **stdout_text,
                          char **stderr_text);
/*
 * The binary started with @args must exit with status 1, as for a
 * command-line error, and print @needle on stderr.
 */
void qtest_assert_start_fails(const char *args, const char *needle);

/* Raw qtest protocol: sends @line (no newline) and returns the reply
 * line without the trailing newline (caller frees). */
char *qtest_raw_cmd(QTestState *s, const char *line);

uint8_t qtest_readb(QTestState *s, uint64_t addr);
uint16_t qtest_readw(QTestState *s, uint64_t addr);
uint32_t qtest_readl(QTestState *s, uint64_t addr);
uint64_t qtest_readq(QTestState *s, uint64_t addr);
void qtest_writeb(QTestState *s, uint64_t addr, uint8_t value);
void qtest_writew(QTestState *s, uint64_t addr, uint16_t value);
void qtest_writel(QTestState *s, uint64_t addr, uint32_t value);
void qtest_writeq(QTestState *s, uint64_t addr, uint64_t value);
/* "read"/"write" (hex) */
void qtest_memread(QTestState *s, uint64_t addr, void *data, size_t size);
void qtest_memwrite(QTestState *s, uint64_t addr, const void *data,
                    size_t size);
/* "b64read"/"b64write" */
void qtest_bufread(QTestState *s, uint64_t addr, void *data, size_t size);
void qtest_bufwrite(QTestState *s, uint64_t addr, const void *data,
                    size_t size);
void qtest_memset(QTestState *s, uint64_t addr, uint8_t pattern,
                  size_t size);
uint8_t qtest_inb(QTestState *s, uint16_t port);
uint16_t qtest_inw(QTestState *s, uint16_t port);
uint32_t qtest_inl(QTestState *s, uint16_t port);
void qtest_outb(QTestState *s, uint16_t port, uint8_t value);
void qtest_outw(QTestState *s, uint16_t port, uint16_t value);
void qtest_outl(QTestState *s, uint16_t port, uint32_t value);

void qtest_irq_intercept_in(QTestState *s, const char *qom_path);
void qtest_irq_intercept_out(QTestState *s, const char *qom_path);
/* Current level of intercepted line @num, from the IRQ lines seen. */
bool qtest_get_irq(QTestState *s, int num);

/* Returns the new virtual clock value (ns). */
int64_t qtest_clock_step(QTestState *s, int64_t step_ns);
int64_t qtest_clock_set(QTestState *s, int64_t val_ns);
bool qtest_big_endian(QTestState *s);

/*
 * QMP.  qtest_qmp() sends a command and returns the reply object (with
 * "return" or "error"); events that arrive meanwhile are queued for
 * qtest_qmp_eventwait().  Caller unrefs the result.
 */
JsonObject *qtest_qmp(QTestState *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
JsonObject *qtest_vqmp(QTestState *s, const char *fmt, va_list ap)
    G_GNUC_PRINTF(2, 0);
/* Sends raw bytes on the QMP socket (no reply awaited). */
void qtest_qmp_send_raw(QTestState *s, const char *text);
/* Reads the next non-event message (a reply). */
JsonObject *qtest_qmp_receive(QTestState *s);
/* Fails the test unless the reply has "return"; returns a new ref to the
 * "return" node (caller frees with json_node_unref). */
JsonNode *qtest_qmp_assert_success(QTestState *s, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);
/* Returns the first queued or arriving event named @event (removed from
 * the queue); fails the test on timeout. */
JsonObject *qtest_qmp_eventwait(QTestState *s, const char *event);
/*
 * migrate @src to @uri, where @dst waits with -incoming, and waits until
 * both say "completed"; fails the test if either fails or it takes more
 * than a minute.
 */
void qtest_migrate_and_wait(QTestState *src, QTestState *dst,
                            const char *uri);
/* query-migrate's status ("none" before any migration); a static buffer. */
const char *qtest_migrate_status(QTestState *s);
/*
 * Polls query-migrate until its status is one of the |-separated names in
 * @want and returns it; fails the test after @timeout_us.
 */
const char *qtest_migrate_wait_status(QTestState *s, const char *want,
                                      gint64 timeout_us);
/* Waits for SHUTDOWN and fails the test unless its reason is @reason. */
void qtest_qmp_wait_shutdown(QTestState *s, const char *reason);
/* Like eventwait, NULL on timeout/exit instead of failing. */
JsonObject *qtest_qmp_eventwait_timeout(QTestState *s, const char *event,
                                        int timeout_ms);
/*
 * device_add with driver, id (may be NULL) and extra properties given as
 * the members of a JSON object ("{'addr': '04.0'}", or NULL/"").  Fails
 * the test on error.
 */
void qtest_qmp_device_add(QTestState *s, const char *driver, const char *id,
                          const char *fmt, ...) G_GNUC_PRINTF(4, 5);
/* device_del and wait for DEVICE_DELETED of @id. */
void qtest_qmp_device_del(QTestState *s, const char *id);

/* Error class/desc helpers on a reply (NULL if it is not an error). */
const char *qtest_qmp_error_class(JsonObject *reply);
const char *qtest_qmp_error_desc(JsonObject *reply);

/* The process under test (for /proc/PID: fds, CPU time). */
pid_t qtest_pid(QTestState *s);
/* A QMP command with fds passed alongside it (SCM_RIGHTS), as getfd needs. */
JsonObject *qtest_qmp_fds(QTestState *s, const int *fds, size_t nfds,
                          const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Path of the binary under test. */
const char *qtest_get_binary(void);

#endif
