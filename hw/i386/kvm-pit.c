/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The in-kernel i8254 PIT as a device, for its one setting: what happens
 * to timer ticks the guest could not take (libvirt's <timer name='pit'
 * tickpolicy=...>, -global kvm-pit.lost_tick_policy=).  KVM re-injects
 * them by default (delay); discard turns that off.  KVM has no slew.
 */
#include "qemu/osdep.h"
#include "hw/i386/kvm-pit.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/boards.h"
#include "system/kvm.h"
#include "qapi/error.h"

typedef enum KvmPitLostTickPolicy {
    KVM_PIT_LOST_TICK_DISCARD,
    KVM_PIT_LOST_TICK_DELAY,
    KVM_PIT_LOST_TICK_SLEW,
} KvmPitLostTickPolicy;

static const char *const kvm_pit_policy_names[] = {
    "discard", "delay", "slew", NULL,
};

typedef struct KvmPitState {
    DeviceState parent_obj;
    int lost_tick_policy;
} KvmPitState;

#define KVM_PIT(obj) OBJECT_CHECK(KvmPitState, (obj), TYPE_KVM_PIT)

static bool kvm_pit_realize(DeviceState *dev, Error **errp)
{
    KvmPitState *s = KVM_PIT(dev);

    if (s->lost_tick_policy == KVM_PIT_LOST_TICK_SLEW) {
        error_setg(errp, "kvm-pit: lost_tick_policy=slew is not supported "
                   "by the in-kernel PIT (delay or discard)");
        return false;
    }
    return kvm_pit_set_reinject(s->lost_tick_policy ==
                                KVM_PIT_LOST_TICK_DELAY, errp);
}

static const Property kvm_pit_props[] = {
    DEFINE_PROP_ENUM("lost_tick_policy", KvmPitState, lost_tick_policy,
                     KVM_PIT_LOST_TICK_DELAY, kvm_pit_policy_names),
    DEFINE_PROP_END_OF_LIST(),
};

static void kvm_pit_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "KVM's in-kernel i8254 PIT (created by the pc machine)";
    dc->realize = kvm_pit_realize;
    dc->user_creatable = false;
    device_class_set_props(dc, kvm_pit_props);
}

static const TypeInfo kvm_pit_type = {
    .name = TYPE_KVM_PIT,
    .parent = TYPE_DEVICE,
    .instance_size = sizeof(KvmPitState),
    .class_init = kvm_pit_class_init,
};

bool kvm_pit_create(MachineState *ms, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_KVM_PIT);

    object_property_add_child(OBJECT(ms), "pit", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return false;
    }
    return true;
}

static void kvm_pit_register_types(void)
{
    type_register_static(&kvm_pit_type);
}

type_init(kvm_pit_register_types)
