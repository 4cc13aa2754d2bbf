/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Machines: a MachineClass describes a board ("pc", "none"); the single
 * MachineState instance lives at /machine and owns the board's devices.
 *
 * Type names carry the "-machine" suffix ("pc-machine"); "-M pc" strips it.
 */
#ifndef HW_BOARDS_H
#define HW_BOARDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "qemu/typedefs.h"
#include "qom/object.h"

#define TYPE_MACHINE "machine"
#define TYPE_MACHINE_SUFFIX "-machine"
#define MACHINE_TYPE_NAME(machinename) (machinename TYPE_MACHINE_SUFFIX)

typedef struct AccelState AccelState;

/*
 * The vCPU topology after -smp is resolved.  sockets * dies * cores *
 * threads == max_cpus; vCPUs [cpus, max_cpus) are only reserved (there is
 * no CPU hot-plug yet).
 */
typedef struct CpuTopology {
    unsigned cpus;
    unsigned max_cpus;
    unsigned sockets;
    unsigned dies;
    unsigned cores;
    unsigned threads;
} CpuTopology;

/*
 * -smp as written: has_X says whether X= appeared (last one wins when
 * -smp is repeated).  clusters/books/drawers exist so that the value 1
 * that management tools may pass is accepted.
 */
typedef struct SmpConfig {
    bool has_cpus, has_maxcpus, has_sockets, has_dies, has_clusters;
    bool has_books, has_drawers, has_cores, has_threads;
    uint64_t cpus, maxcpus, sockets, dies, clusters;
    uint64_t books, drawers, cores, threads;
} SmpConfig;

struct MachineClass {
    ObjectClass parent_class;

    /* Short name ("pc"); derived from the type name when NULL. */
    const char *name;
    /* Another name the machine answers to ("pc" for pc-i440fx-8.2). */
    const char *alias;
    const char *desc;
    /* Builds the board: RAM, buses, built-in devices. */
    bool (*init)(MachineState *ms, Error **errp);
    /* Whole-machine reset; NULL means qemu_devices_reset(). */
    void (*reset)(MachineState *ms);
    bool is_default;
    uint64_t default_ram_size;
    /* query-machines' default-ram-id: the RAM back-end's id, or NULL. */
    const char *default_ram_id;
    unsigned max_cpus;          /* 0: no limit of the machine's own */
    /* Whether -smp dies= may be above 1 (x86 only). */
    bool smp_dies_supported;
    /* Accelerator to use when neither -accel nor accel= is given. */
    const char *default_accel;
};

struct MachineState {
    Object parent_obj;

    uint64_t ram_size;
    bool ram_size_set;          /* -m given */
    MemoryRegion *ram;
    char *kernel_filename;
    char *initrd_filename;
    char *kernel_cmdline;
    char *firmware;
    CpuTopology smp;            /* default: one vCPU */
    /* -machine acpi=on|off (-no-acpi): build ACPI tables (default on). */
    bool acpi;
    AccelState *accelerator;
    bool dump_guest_core;       /* -machine dump-guest-core (default on) */
    /* -machine memory-backend=ID: the -object that is guest RAM. */
    char *memory_backend;
    bool ram_owned;             /* ms->ram is ours to free */
    bool usb;                   /* -machine usb=on / -usb */
    /*
     * The present vCPUs' QOM objects (smp.cpus entries), for the
     * qom-path of query-cpus-fast and query-hotpluggable-cpus; NULL
     * on boards that make none.
     */
    Object **cpu_objs;
};

#define MACHINE(obj) OBJECT_CHECK(MachineState, (obj), TYPE_MACHINE)
#define MACHINE_CLASS(klass) \
    OBJECT_CLASS_CHECK(MachineClass, (klass), TYPE_MACHINE)
#define MACHINE_GET_CLASS(obj) \
    OBJECT_GET_CLASS(MachineClass, (obj), TYPE_MACHINE)

extern MachineState *current_machine;

/* "pc" or "pc-machine" -> class; NULL if unknown. */
MachineClass *machine_find_class(const char *name);
/* "pc-machine" -> "pc" (g_free the result). */
char *machine_class_short_name(MachineClass *mc);
MachineClass *machine_default_class(void);
/* "-M help": "name  description" lines, the default one marked. */
void machine_print_list(FILE *out);
/* -machine TYPE,help: the properties TYPE accepts, sorted by name. */
bool machine_print_props(FILE *out, const char *name, Error **errp);

/*
 * Allocates ms->ram (ms->ram_size bytes, memfd-backed) as "pc.ram" etc.;
 * not mapped anywhere.  False with errp set if the host refuses.
 */
bool machine_alloc_ram(MachineState *ms, const char *name, Error **errp);
/*
 * Before the board is built: -machine memory-backend= and -numa memdevs
 * decide the RAM size when -m was not given (and must agree with it when
 * it was).  False with errp set.
 */
bool machine_resolve_memory(MachineState *ms, Error **errp);

/*
 * -m's slots= and maxmem= against the size (0: not given), with QEMU's
 * error texts; true if they may be used.
 */
bool machine_memory_check(const QemuOpts *opts, uint64_t size, Error **errp);

/*
 * Merges one -smp argument ("[cpus=]N,sockets=S,...") into *config.
 * False with errp set on an unknown key or a non-numeric value.
 */
bool machine_smp_config_parse(SmpConfig *config, const char *arg,
                              Error **errp);

/*
 * Resolves *config into *topo with QEMU 8.2's rules for machine @mc:
 * omitted values are computed (cores preferred over sockets), maxcpus
 * defaults to cpus, and the result must be consistent and within
 * mc->max_cpus.  Zero values are deprecated: warned about and treated as
 * omitted.  False with errp set (and *topo untouched) otherwise.
 */
bool machine_parse_smp(const MachineClass *mc, const SmpConfig *config,
                       CpuTopology *topo, Error **errp);

/* Callbacks run once the machine and the -device devices are created. */
typedef void MachineInitDoneFn(void *opaque);
void qemu_run_machine_init_done(void);
/* Runs fn once the -device devices exist (at once if they already do). */
void qemu_add_machine_init_done(MachineInitDoneFn *fn, void *opaque);

#endif
