/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos RTAS: PAPR calls on the pseries machine through the qtest
 * "rtas" command.  Argument and return cells are big-endian words in
 * guest RAM at a scratch address (QRTAS_SCRATCH, 1 MiB in).
 */
#ifndef LIBQOS_RTAS_H
#define LIBQOS_RTAS_H

#include <stdbool.h>
#include <stdint.h>
#include "libqtest.h"

#define QRTAS_SCRATCH 0x100000ULL
#define QRTAS_MAX_CELLS 16

/* PAPR statuses */
#define QRTAS_SUCCESS 0
#define QRTAS_HW_ERROR (-1)
#define QRTAS_PARAM_ERROR (-3)
/* What the qtest command answers for a name no call has (H_PARAMETER). */
#define QRTAS_H_PARAMETER ((uint64_t)(int64_t)-4)

/* ibm,change-msi functions */
#define QRTAS_MSI_QUERY 0
#define QRTAS_MSI_CHANGE 1
#define QRTAS_MSI_RESET 2
#define QRTAS_MSI_MSI 3
#define QRTAS_MSI_MSIX 4

#define QRTAS_PHB_BUID 0x800000020000000ULL

/* The raw protocol command: returns the number after "OK". */
uint64_t qtest_rtas_call(QTestState *s, const char *name, uint32_t nargs,
                         uint64_t args, uint32_t nret, uint64_t rets);

/*
 * Writes nargs cells, runs name, reads back nret cells (at most
 * QRTAS_MAX_CELLS of each are staged).  Returns the command's number
 * (0 when the call ran).
 */
uint64_t qrtas_call(QTestState *s, const char *name, uint32_t nargs,
                    const uint32_t *args, uint32_t nret, uint32_t *rets);

/* PAPR config address of bus 0, devfn, register. */
uint32_t qrtas_config_addr(int devfn, uint16_t reg);

/* The calls; each returns the PAPR status from the first return cell. */
int qrtas_ibm_read_pci_config(QTestState *s, uint64_t buid, uint32_t addr,
                              uint32_t size, uint32_t *val);
int qrtas_ibm_write_pci_config(QTestState *s, uint64_t buid, uint32_t addr,
                               uint32_t size, uint32_t val);
int qrtas_read_pci_config(QTestState *s, uint32_t addr, uint32_t size,
                          uint32_t *val);
int qrtas_write_pci_config(QTestState *s, uint32_t addr, uint32_t size,
                           uint32_t val);
/* *count: vectors now allocated; *seq: in, the sequence number; out, the
 * one returned. */
int qrtas_ibm_change_msi(QTestState *s, uint64_t buid, uint32_t addr,
                         uint32_t fn, uint32_t req, uint32_t *count,
                         uint32_t *seq);
int qrtas_ibm_query_interrupt_source_number(QTestState *s, uint64_t buid,
                                            uint32_t addr, uint32_t index,
                                            uint32_t *irq, uint32_t *edge);

#endif
