/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-pci: the vfio-pci device model on a vfio-user server.
 *
 * A subclass of vfio-pci-base (hw/vfio/pci.h) that owns what only
 * vfio-user has: the socket properties and x-msg-timeout, the connection,
 * the main-loop handler that serves the server's requests while none of
 * ours is outstanding, and the DMA_READ/DMA_WRITE path into guest memory.
 * Everything else (config space, BARs, interrupts, DMA mapping) is the
 * base class's, reached through vfio_pci_realize_device().
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "system/address-spaces.h"
#include "hw/qdev-properties.h"
#include "hw/vfio/pci.h"
#include "client.h"

#define TYPE_VFIO_USER_PCI "vfio-user-pci"
#define VFIO_USER_PCI(obj) \
    OBJECT_CHECK(VFIOUserPCIDevice, (obj), TYPE_VFIO_USER_PCI)

typedef struct VFIOUserPCIDevice {
    VFIOPCIDevice parent_obj;

    int socket_fd;              /* main-loop fd handler, -1: none */

    /* Properties */
    char *socket_path;
    char *socket_json_path;     /* socket.path */
    char *socket_json_type;     /* socket.type */
    uint32_t msg_timeout_ms;
} VFIOUserPCIDevice;

static void (*vfio_user_pci_parent_exit)(PCIDevice *pdev);

static void vfio_user_pci_socket_handler_off(VFIOUserPCIDevice *udev)
{
    if (udev->socket_fd >= 0) {
        qemu_set_fd_handler(udev->socket_fd, NULL, NULL, NULL);
        udev->socket_fd = -1;
    }
}

/*
 * The server sent something while no request of ours was outstanding.
 * Once the connection is lost (here, or found lost by a request) the
 * handler goes, so an fd left readable at EOF cannot spin the main loop.
 */
static void vfio_user_pci_socket_read(void *opaque)
{
    VFIOUserPCIDevice *udev = opaque;
    VFIOPCIDevice *vdev = &udev->parent_obj;
    Error *err = NULL;

    if (!vdev->vbasedev.broken &&
        vfio_user_client_process_incoming(vdev->vbasedev.backend, &err)) {
        return;
    }
    error_free(err);
    vdev->vbasedev.broken = true;
    vfio_user_pci_socket_handler_off(udev);
    vfio_pci_check_broken(vdev);
}

static bool vfio_user_pci_dma_rw(void *opaque, uint64_t addr, void *buf,
                                 uint64_t len, bool is_write, Error **errp)
{
    VFIOPCIDevice *vdev = opaque;

    /* A server may reach guest RAM only, as through an IOMMU. */
    return address_space_dma_rw_ram(&address_space_memory, addr, buf, len,
                                    is_write, vdev->vbasedev.name, errp);
}

static bool vfio_user_pci_realize(PCIDevice *pdev, Error **errp)
{
    VFIOUserPCIDevice *udev = VFIO_USER_PCI(pdev);
    VFIOPCIDevice *vdev = &udev->parent_obj;
    const char *path = udev->socket_path;
    VFIOUserClient *client;

    if (udev->socket_json_type && strcmp(udev->socket_json_type, "unix")) {
        error_setg(errp, "vfio-user-pci: socket.type '%s' is not supported"
                   " (only 'unix')", udev->socket_json_type);
        return false;
    }
    if (!path || !path[0]) {
        path = udev->socket_json_path;
    }
    if (!path || !path[0]) {
        error_setg(errp, "vfio-user-pci: 'socket' (the server's UNIX socket"
                   " path) is required");
        return false;
    }
    vdev->vbasedev.name = g_strdup(path);
    vdev->vbasedev.fd = -1;
    client = vfio_user_client_connect(path, udev->msg_timeout_ms, errp);
    if (!client) {
        return false;
    }
    vfio_user_client_set_dma_handler(client, vfio_user_pci_dma_rw, vdev);
    if (!vfio_user_device_attach(&vdev->vbasedev, client, errp)) {
        vfio_device_close(&vdev->vbasedev);
        return false;
    }
    if (!vfio_pci_realize_device(vdev, errp)) {
        return false;
    }
    udev->socket_fd = vfio_user_client_get_fd(client);
    qemu_set_fd_handler(udev->socket_fd, vfio_user_pci_socket_read, NULL,
                        udev);
    return true;
}

/* The handler goes before the base class closes the connection. */
static void vfio_user_pci_exit(PCIDevice *pdev)
{
    vfio_user_pci_socket_handler_off(VFIO_USER_PCI(pdev));
    vfio_user_pci_parent_exit(pdev);
}

static void vfio_user_pci_instance_init(Object *obj)
{
    VFIO_USER_PCI(obj)->socket_fd = -1;
}

static const Property vfio_user_pci_props[] = {
    DEFINE_PROP_STRING("socket", VFIOUserPCIDevice, socket_path,
                       .description = "vfio-user server UNIX socket path"),
    DEFINE_PROP_STRING("socket.path", VFIOUserPCIDevice, socket_json_path,
                       .description = "socket path (JSON socket "
                                      "address form)"),
    DEFINE_PROP_STRING("socket.type", VFIOUserPCIDevice, socket_json_type,
                       .description = "socket type (JSON socket address "
                                      "form): unix"),
    DEFINE_PROP_UINT32("x-msg-timeout", VFIOUserPCIDevice, msg_timeout_ms,
                       VFIO_USER_DEFAULT_MSG_TIMEOUT_MS,
                       .description = "reply timeout in milliseconds"),
    DEFINE_PROP_END_OF_LIST(),
};

static void vfio_user_pci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "vfio-user PCI device";
    dc->user_creatable = true;
    dc->hotpluggable = true;
    device_class_set_props(dc, vfio_user_pci_props);
    pc->realize = vfio_user_pci_realize;
    vfio_user_pci_parent_exit = pc->exit;
    pc->exit = vfio_user_pci_exit;
}

static const TypeInfo vfio_user_pci_types[] = {
    {
        .name = TYPE_VFIO_USER_PCI,
        .parent = TYPE_VFIO_PCI_BASE,
        .instance_size = sizeof(VFIOUserPCIDevice),
        .instance_init = vfio_user_pci_instance_init,
        .class_init = vfio_user_pci_class_init,
    },
};

DEFINE_TYPES(vfio_user_pci_types)
