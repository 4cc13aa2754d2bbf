/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start-up options that management tools (libvirt) pass and that describe
 * the process or refuse what Conduit lacks, rather than build devices:
 * -daemonize, -overcommit, -uuid, -rtc, -boot, -audiodev, -msg, -cpu and
 * -sandbox.  Each parser returns false with errp set on a value Conduit
 * cannot honour; vl.c reports it against the option and exits.
 */
#ifndef SYSTEM_VL_COMPAT_H
#define SYSTEM_VL_COMPAT_H

#include <stdbool.h>
#include "qemu/typedefs.h"

/*
 * -daemonize: forks before any thread exists; the original process exits
 * 0 only after daemonize_done() (monitors listen, pid file written), 1 if
 * the daemon dies first.  daemonize_done() is a no-op without -daemonize.
 */
void daemonize_start(void);
void daemonize_done(void);

bool vl_parse_overcommit(const char *arg, bool *mem_lock, Error **errp);
bool vl_parse_uuid(const char *arg, Error **errp);
bool vl_parse_boot(const char *arg, Error **errp);
/* -action reboot=reset|shutdown,shutdown=poweroff|pause */
bool vl_parse_action(const char *arg, Error **errp);
bool vl_parse_audiodev(const char *arg, Error **errp);
bool vl_parse_msg(const char *arg, Error **errp);
/* "-cpu help" prints the models and exits 0. */
bool vl_parse_cpu(const char *arg, Error **errp);
bool vl_parse_sandbox(const char *arg, Error **errp);

#endif
