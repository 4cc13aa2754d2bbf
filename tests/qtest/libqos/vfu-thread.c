/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An in-process libvfu device for qtests; see vfu-thread.h.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "vfu-thread.h"

/* Nothing to reset: the tests' devices keep no state a reset clears. */
static void qvfu_thread_reset(VfuCtx *ctx, void *opaque,
                              VfuResetReason reason)
{
}

static const VfuDeviceOps qvfu_thread_ops = {
    .reset = qvfu_thread_reset,
};

void qvfu_thread_init(QVfuThread *vt, const char *name,
                      const VfuPciIds *ids, void *opaque)
{
    g_autofree char *tmpl = g_strdup_printf("vfio-user-%s-XXXXXX", name);
    g_autofree char *file = g_strdup_printf("%s.sock", name);

    memset(vt, 0, sizeof(*vt));
    vt->dir = g_dir_make_tmp(tmpl, NULL);
    g_assert_nonnull(vt->dir);
    vt->sock = g_build_filename(vt->dir, file, NULL);
    vt->ctx = vfu_create_ctx(vt->sock, &qvfu_thread_ops, opaque, NULL,
                             &error_abort);
    g_assert_true(vfu_pci_init(vt->ctx, ids, &error_abort));
}

static gpointer qvfu_thread_run(gpointer data)
{
    QVfuThread *vt = data;

    g_assert_true(vfu_run(vt->ctx, &error_abort));
    return NULL;
}

void qvfu_thread_start(QVfuThread *vt)
{
    vt->thread = g_thread_new("vfu-server", qvfu_thread_run, vt);
}

void qvfu_thread_stop(QVfuThread *vt)
{
    vfu_stop(vt->ctx);
    g_thread_join(vt->thread);
    vfu_destroy_ctx(vt->ctx);
    unlink(vt->sock);
    rmdir(vt->dir);
    g_free(vt->sock);
    g_free(vt->dir);
}
