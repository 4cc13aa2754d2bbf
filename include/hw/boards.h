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

struct MachineClass {
    ObjectClass parent_class;

    /* Short name ("pc"); derived from the type name when NULL. */
    const char *name;
    const char *desc;
    /* Builds the board: RAM, buses, built-in devices. */
    bool (*init)(MachineState *ms, Error **errp);
    /* Whole-machine reset; NULL means qemu_devices_reset(). */
    void (*reset)(MachineState *ms);
    bool is_default;
    uint64_t default_ram_size;
    unsigned max_cpus;
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
    unsigned smp_cpus;
    AccelState *accelerator;
};

#define MACHINE(obj) OBJECT_CHECK(MachineState, (obj), TYPE_MACHINE)
#define MACHINE_CLASS(klass) \
    OBJECT_CLASS_CHECK(MachineClass, (klass), TYPE_MACHINE)
#define MACHINE_GET_CLASS(obj) \
    OBJECT_GET_CLASS(MachineClass, (obj), TYPE_MACHINE)

extern MachineState *current_machine;

/* "pc" or "pc-machine" -> class; NULL if unknown. */
MachineClass *machine_find_class(const char *name);
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

/* Callbacks run once the machine and the -device devices are created. */
typedef void MachineInitDoneFn(void *opaque);
void qemu_add_machine_init_done(MachineInitDoneFn *fn, void *opaque);
void qemu_run_machine_init_done(void);
bool machine_init_done(void);

#endif
