/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos RTAS calls through the qtest "rtas" command. */
#include "qemu/osdep.h"
#include "libqos/rtas.h"

#define QRTAS_RETS (QRTAS_SCRATCH + 4 * QRTAS_MAX_CELLS)

uint64_t qtest_rtas_call(QTestState *s, const char *name, uint32_t nargs,
                         uint64_t args, uint32_t nret, uint64_t rets)
{
    g_autofree char *cmd = g_strdup_printf("rtas %s %u 0x%" PRIx64 " %u 0x%"
                                           PRIx64, name, nargs, args, nret,
                                           rets);
    g_autofree char *reply = qtest_raw_cmd(s, cmd);

    g_assert_true(g_str_has_prefix(reply, "OK "));
    return g_ascii_strtoull(reply + 3, NULL, 10);
}

uint64_t qrtas_call(QTestState *s, const char *name, uint32_t nargs,
                    const uint32_t *args, uint32_t nret, uint32_t *rets)
{
    uint8_t buf[4 * QRTAS_MAX_CELLS];
    uint32_t nw = MIN(nargs, QRTAS_MAX_CELLS);
    uint32_t nr = MIN(nret, QRTAS_MAX_CELLS);
    uint64_t res;

    for (uint32_t i = 0; i < nw; i++) {
        stl_be_p(buf + 4 * i, args[i]);
    }
    if (nw) {
        qtest_memwrite(s, QRTAS_SCRATCH, buf, 4 * nw);
    }
    /* Poison the return cells so a call that writes nothing shows. */
    qtest_memset(s, QRTAS_RETS, 0xa5, 4 * QRTAS_MAX_CELLS);
    res = qtest_rtas_call(s, name, nargs, QRTAS_SCRATCH, nret, QRTAS_RETS);
    if (nr) {
        qtest_memread(s, QRTAS_RETS, buf, 4 * nr);
        for (uint32_t i = 0; i < nr; i++) {
            rets[i] = ldl_be_p(buf + 4 * i);
        }
    }
    return res;
}

uint32_t qrtas_config_addr(int devfn, uint16_t reg)
{
    return ((uint32_t)(reg & 0xf00) << 16) | ((devfn & 0xff) << 8) |
           (reg & 0xff);
}

static int qrtas_checked(QTestState *s, const char *name, uint32_t nargs,
                         const uint32_t *args, uint32_t nret, uint32_t *rets)
{
    g_assert_cmpuint(qrtas_call(s, name, nargs, args, nret, rets), ==, 0);
    return (int32_t)rets[0];
}

int qrtas_ibm_read_pci_config(QTestState *s, uint64_t buid, uint32_t addr,
                              uint32_t size, uint32_t *val)
{
    uint32_t args[4] = { addr, buid >> 32, (uint32_t)buid, size };
    uint32_t rets[2];
    int st = qrtas_checked(s, "ibm,read-pci-config", 4, args, 2, rets);

    *val = st == QRTAS_SUCCESS ? rets[1] : UINT32_MAX;
    return st;
}

int qrtas_ibm_write_pci_config(QTestState *s, uint64_t buid, uint32_t addr,
                               uint32_t size, uint32_t val)
{
    uint32_t args[5] = { addr, buid >> 32, (uint32_t)buid, size, val };
    uint32_t rets[1];

    return qrtas_checked(s, "ibm,write-pci-config", 5, args, 1, rets);
}

int qrtas_read_pci_config(QTestState *s, uint32_t addr, uint32_t size,
                          uint32_t *val)
{
    uint32_t args[2] = { addr, size };
    uint32_t rets[2];
    int st = qrtas_checked(s, "read-pci-config", 2, args, 2, rets);

    *val = st == QRTAS_SUCCESS ? rets[1] : UINT32_MAX;
    return st;
}

int qrtas_write_pci_config(QTestState *s, uint32_t addr, uint32_t size,
                           uint32_t val)
{
    uint32_t args[3] = { addr, size, val };
    uint32_t rets[1];

    return qrtas_checked(s, "write-pci-config", 3, args, 1, rets);
}

int qrtas_ibm_change_msi(QTestState *s, uint64_t buid, uint32_t addr,
                         uint32_t fn, uint32_t req, uint32_t *count,
                         uint32_t *seq)
{
    uint32_t args[6] = { addr, buid >> 32, (uint32_t)buid, fn, req, *seq };
    uint32_t rets[3];
    int st = qrtas_checked(s, "ibm,change-msi", 6, args, 3, rets);

    if (st == QRTAS_SUCCESS) {
        *count = rets[1];
        *seq = rets[2];
    }
    return st;
}

int qrtas_ibm_query_interrupt_source_number(QTestState *s, uint64_t buid,
                                            uint32_t addr, uint32_t index,
                                            uint32_t *irq, uint32_t *edge)
{
    uint32_t args[4] = { addr, buid >> 32, (uint32_t)buid, index };
    uint32_t rets[3];
    int st = qrtas_checked(s, "ibm,query-interrupt-source-number", 4, args,
                           3, rets);

    if (st == QRTAS_SUCCESS) {
        *irq = rets[1];
        *edge = rets[2];
    }
    return st;
}
