/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RTAS, the PAPR run-time services the guest calls instead of touching
 * platform hardware.  A call is a name (the guest learns its token from
 * the /rtas node) with argument and return cells: 32-bit big-endian words
 * in guest memory.  Handlers see host-order cell arrays; the guest-memory
 * side is spapr_rtas_call_guest(), which the qtest "rtas" command uses:
 *
 *   rtas NAME NARGS ARGS_ADDR NRET RETS_ADDR  ->  OK 0
 *
 * As in QEMU, the reply carries the hypervisor-call result: 0 when the
 * call ran (its status is in the first return cell), H_PARAMETER (-4, as
 * an unsigned 64-bit number) when no call has that name.
 *
 * Every handler checks its cell counts first; a bad count gets
 * RTAS_OUT_PARAM_ERROR in the first return cell when there is one.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/ppc/spapr.h"
#include "system/qtest.h"
#include "trace.h"

typedef void SpaprRtasFn(SpaprMachineState *sms, uint32_t nargs,
                         const uint32_t *args, uint32_t nret,
                         uint32_t *rets);

static uint64_t rtas_buid(const uint32_t *args, int hi)
{
    return ((uint64_t)args[hi] << 32) | args[hi + 1];
}

static void rtas_status(uint32_t nret, uint32_t *rets, int status)
{
    if (nret >= 1) {
        rets[0] = (uint32_t)status;
    }
}

/* ---- config space ---- */

/*
 * Returns the device and register for an access of size bytes, or NULL
 * after writing the error status.
 */
static PCIDevice *rtas_config_target(SpaprMachineState *sms, uint64_t buid,
                                     uint32_t addr, uint32_t size,
                                     uint32_t nret, uint32_t *rets,
                                     uint32_t *reg)
{
    PCIDevice *dev;

    if (buid != spapr_phb_buid(sms->phb)) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return NULL;
    }
    dev = spapr_phb_find_device(sms->phb, buid, addr);
    *reg = RTAS_CONFIG_ADDR_REG(addr);
    if (!dev || (size != 1 && size != 2 && size != 4) || *reg % size ||
        *reg + size > dev->config_size) {
        rtas_status(nret, rets, RTAS_OUT_HW_ERROR);
        return NULL;
    }
    return dev;
}

static void rtas_do_read_config(SpaprMachineState *sms, uint64_t buid,
                                uint32_t addr, uint32_t size, uint32_t nret,
                                uint32_t *rets)
{
    uint32_t reg, val;
    PCIDevice *dev = rtas_config_target(sms, buid, addr, size, nret, rets,
                                        &reg);

    if (!dev) {
        trace_spapr_rtas_config(addr, size, 0, false);
        return;
    }
    val = pci_host_config_read_common(dev, reg, dev->config_size, size);
    trace_spapr_rtas_config(addr, size, val, false);
    rets[0] = RTAS_OUT_SUCCESS;
    rets[1] = val;
}

static void rtas_do_write_config(SpaprMachineState *sms, uint64_t buid,
                                 uint32_t addr, uint32_t size, uint32_t val,
                                 uint32_t nret, uint32_t *rets)
{
    uint32_t reg;
    PCIDevice *dev = rtas_config_target(sms, buid, addr, size, nret, rets,
                                        &reg);

    trace_spapr_rtas_config(addr, size, val, true);
    if (!dev) {
        return;
    }
    pci_host_config_write_common(dev, reg, dev->config_size, val, size);
    rets[0] = RTAS_OUT_SUCCESS;
}

/* ibm,read-pci-config: addr, buid hi, buid lo, size -> status, value */
static void rtas_ibm_read_pci_config(SpaprMachineState *sms, uint32_t nargs,
                                     const uint32_t *args, uint32_t nret,
                                     uint32_t *rets)
{
    if (nargs != 4 || nret != 2) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    rtas_do_read_config(sms, rtas_buid(args, 1), args[0], args[3], nret,
                        rets);
}

/* read-pci-config: addr, size -> status, value (the PHB of bus 0) */
static void rtas_read_pci_config(SpaprMachineState *sms, uint32_t nargs,
                                 const uint32_t *args, uint32_t nret,
                                 uint32_t *rets)
{
    if (nargs != 2 || nret != 2) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    rtas_do_read_config(sms, spapr_phb_buid(sms->phb), args[0], args[1],
                        nret, rets);
}

/* ibm,write-pci-config: addr, buid hi, buid lo, size, value -> status */
static void rtas_ibm_write_pci_config(SpaprMachineState *sms, uint32_t nargs,
                                      const uint32_t *args, uint32_t nret,
                                      uint32_t *rets)
{
    if (nargs != 5 || nret != 1) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    rtas_do_write_config(sms, rtas_buid(args, 1), args[0], args[3], args[4],
                         nret, rets);
}

/* write-pci-config: addr, size, value -> status */
static void rtas_write_pci_config(SpaprMachineState *sms, uint32_t nargs,
                                  const uint32_t *args, uint32_t nret,
                                  uint32_t *rets)
{
    if (nargs != 3 || nret != 1) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    rtas_do_write_config(sms, spapr_phb_buid(sms->phb), args[0], args[1],
                         args[2], nret, rets);
}

/* ---- MSI ---- */

/*
 * ibm,change-msi: addr, buid hi, buid lo, function, requested count
 * [, sequence number] -> status, count, sequence number + 1 [, type].
 * We never answer "busy", so one call completes the change.
 */
static void rtas_ibm_change_msi(SpaprMachineState *sms, uint32_t nargs,
                                const uint32_t *args, uint32_t nret,
                                uint32_t *rets)
{
    uint64_t buid;
    PCIDevice *dev;
    uint32_t seq, count, type;
    int status;

    if ((nargs != 5 && nargs != 6) || (nret != 3 && nret != 4)) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    buid = rtas_buid(args, 1);
    seq = nargs == 6 ? args[5] : 0;
    dev = spapr_phb_find_device(sms->phb, buid, args[0]);
    if (!dev) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    status = spapr_phb_change_msi(sms->phb, dev, args[3], args[4], &count,
                                  &type);
    trace_spapr_rtas_change_msi(args[0], args[3], args[4], status, count);
    rets[0] = (uint32_t)status;
    if (status != RTAS_OUT_SUCCESS) {
        return;
    }
    rets[1] = count;
    rets[2] = seq + 1;
    if (nret == 4) {
        rets[3] = type;
    }
}

/*
 * ibm,query-interrupt-source-number: addr, buid hi, buid lo, interrupt
 * index -> status, source number, 1 for edge (MSI) / 0 for level (INTx).
 */
static void rtas_ibm_query_interrupt_source_number(SpaprMachineState *sms,
                                                   uint32_t nargs,
                                                   const uint32_t *args,
                                                   uint32_t nret,
                                                   uint32_t *rets)
{
    PCIDevice *dev;
    unsigned int count;
    uint32_t index;
    bool is_msix;
    int first;
    uint8_t pin;

    if (nargs != 4 || nret != 3) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    dev = spapr_phb_find_device(sms->phb, rtas_buid(args, 1), args[0]);
    if (!dev) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    index = args[3];
    count = spapr_phb_msi_get(sms->phb, dev, &first, &is_msix);
    if (count) {
        if (index >= count) {
            rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
            return;
        }
        rets[0] = RTAS_OUT_SUCCESS;
        rets[1] = first + index;
        rets[2] = 1;
        return;
    }
    /* No MSIs: index 0 is the device's INTx pin, if it has one. */
    pin = pci_get_byte(dev->config + PCI_INTERRUPT_PIN);
    if (index != 0 || !pin || pin > SPAPR_IRQ_NR_LSI) {
        rtas_status(nret, rets, RTAS_OUT_PARAM_ERROR);
        return;
    }
    rets[0] = RTAS_OUT_SUCCESS;
    rets[1] = SPAPR_IRQ_LSI_BASE + ((PCI_SLOT(dev->devfn) + pin - 1) %
                                    SPAPR_IRQ_NR_LSI);
    rets[2] = 0;
}

/* ---- dispatch ---- */

static const struct {
    const char *name;
    SpaprRtasFn *fn;
} rtas_calls[] = {
    { "read-pci-config", rtas_read_pci_config },
    { "write-pci-config", rtas_write_pci_config },
    { "ibm,read-pci-config", rtas_ibm_read_pci_config },
    { "ibm,write-pci-config", rtas_ibm_write_pci_config },
    { "ibm,change-msi", rtas_ibm_change_msi },
    { "ibm,query-interrupt-source-number",
      rtas_ibm_query_interrupt_source_number },
};

const char *const *spapr_rtas_call_names(void)
{
    static const char *names[ARRAY_SIZE(rtas_calls) + 1];

    if (!names[0]) {
        for (size_t i = 0; i < ARRAY_SIZE(rtas_calls); i++) {
            names[i] = rtas_calls[i].name;
        }
    }
    return names;
}

bool spapr_rtas_call(SpaprMachineState *sms, const char *name,
                     uint32_t nargs, const uint32_t *args,
                     uint32_t nret, uint32_t *rets)
{
    for (size_t i = 0; i < ARRAY_SIZE(rtas_calls); i++) {
        if (!strcmp(rtas_calls[i].name, name)) {
            trace_spapr_rtas_call(name, nargs, nret);
            rtas_calls[i].fn(sms, nargs, args, nret, rets);
            return true;
        }
    }
    return false;
}

bool spapr_rtas_call_guest(SpaprMachineState *sms, const char *name,
                           uint32_t nargs, uint64_t args_addr,
                           uint32_t nret, uint64_t rets_addr)
{
    uint32_t args[RTAS_MAX_CELLS] = { 0 };
    uint32_t rets[RTAS_MAX_CELLS] = { 0 };
    uint32_t nargs_read = MIN(nargs, RTAS_MAX_CELLS);
    uint32_t nret_kept = MIN(nret, RTAS_MAX_CELLS);
    bool found;

    for (uint32_t i = 0; i < nargs_read; i++) {
        args[i] = address_space_ldl_be(&address_space_memory,
                                       args_addr + 4ULL * i, NULL);
    }
    /*
     * More cells than any call takes is a bad count for every call: the
     * handlers see the real counts and reject them (the arrays are only
     * indexed after that check).
     */
    found = spapr_rtas_call(sms, name, nargs, args, nret_kept, rets);
    if (!found) {
        return false;
    }
    for (uint32_t i = 0; i < nret_kept; i++) {
        address_space_stl_be(&address_space_memory, rets_addr + 4ULL * i,
                             rets[i], NULL);
    }
    return true;
}

static bool rtas_parse_u64(const char *s, uint64_t *v, Error **errp)
{
    char *end;

    errno = 0;
    *v = g_ascii_strtoull(s, &end, 0);
    if (errno || *end || !*s || *s == '-') {
        error_setg(errp, "rtas: invalid number '%s'", s);
        return false;
    }
    return true;
}

static bool rtas_qtest_cmd(int argc, char **argv, GString *reply,
                           Error **errp)
{
    SpaprMachineState *sms;
    uint64_t nargs, args, nret, rets;

    if (argc != 6) {
        error_setg(errp, "rtas: usage: rtas NAME NARGS ARGS_ADDR NRET "
                   "RETS_ADDR");
        return false;
    }
    if (!rtas_parse_u64(argv[2], &nargs, errp) ||
        !rtas_parse_u64(argv[3], &args, errp) ||
        !rtas_parse_u64(argv[4], &nret, errp) ||
        !rtas_parse_u64(argv[5], &rets, errp)) {
        return false;
    }
    sms = (SpaprMachineState *)object_dynamic_cast(qdev_get_machine(),
                                                   TYPE_SPAPR_MACHINE);
    if (!sms) {
        error_setg(errp, "rtas: not a pseries machine");
        return false;
    }
    if (nargs > UINT32_MAX || nret > UINT32_MAX) {
        nargs = nret = UINT32_MAX;  /* still a bad count: PARAM_ERROR */
    }
    if (!spapr_rtas_call_guest(sms, argv[1], nargs, args, nret, rets)) {
        g_string_append_printf(reply, "%" PRIu64,
                               (uint64_t)(int64_t)RTAS_H_PARAMETER);
        return true;
    }
    g_string_append(reply, "0");
    return true;
}

void spapr_rtas_register_qtest(void)
{
    qtest_register_command("rtas", rtas_qtest_cmd);
}
