/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Random number generator back-ends (-object rng-random / rng-builtin),
 * the entropy source of virtio-rng, as QEMU names them:
 *
 *   -object rng-random,id=ID[,filename=/dev/urandom]   reads a file or
 *       character device (opened non-blocking at creation)
 *   -object rng-builtin,id=ID                          the host's
 *       getrandom(2)
 *
 * A back-end serves one front-end at a time.  Everything runs in the
 * main loop with the BQL held.
 */
#ifndef SYSTEM_RNG_H
#define SYSTEM_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "qemu/typedefs.h"
#include "qom/object.h"

#define TYPE_RNG_BACKEND "rng-backend"
#define TYPE_RNG_RANDOM "rng-random"
#define TYPE_RNG_BUILTIN "rng-builtin"

typedef struct RngBackend RngBackend;

/* The back-end at /objects/ID, or NULL with errp set. */
RngBackend *rng_backend_find(const char *id, Error **errp);
/* A private rng-builtin for a front-end given none (QEMU's default). */
RngBackend *rng_backend_new_builtin(void);
/* Claims the back-end for one front-end; false if another has it. */
bool rng_backend_claim(RngBackend *rng, const char *user, Error **errp);
void rng_backend_release(RngBackend *rng);
/*
 * Up to len random bytes into buf without blocking: the count, 0 if none
 * are ready now (rng_backend_wait_fd() then says what to wait for), -1 if
 * the source failed for good.
 */
ssize_t rng_backend_read(RngBackend *rng, void *buf, size_t len);
/* An fd that becomes readable when bytes are ready, or -1 (always ready). */
int rng_backend_wait_fd(RngBackend *rng);
const char *rng_backend_name(RngBackend *rng);

#endif
