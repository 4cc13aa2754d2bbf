/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x-coalesce-trapped-writes=auto: whether writes to the registers of a
 * trapped page are coalesced (KVM completes them in the kernel, Conduit
 * replays them from the ring).  A pure decision, unit-tested.
 *
 * What it trades: each write saves an exit to userspace (~25-37 us on the
 * reference machine), but reaches the device only when a vCPU next exits
 * or the drainer thread finds it, and the drainer spins while the guest
 * writes.  With fewer cores than busy threads (vCPU, server poller,
 * drainer) the drainer steals the time it was meant to save; `make bench`
 * measures both (docs/system/vfio.rst has the numbers).
 */
#include "qemu/osdep.h"
#include "hw/vfio/pci.h"

bool vfio_coalesce_auto_policy(long online_cpus)
{
    return online_cpus >= VFIO_COALESCE_AUTO_MIN_CPUS;
}
