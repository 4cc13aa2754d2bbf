/* SPDX-License-Identifier: GPL-2.0-or-later */
/* query-pci and HMP "info pci" (hw/pci/pci-qmp.c). */
#ifndef HW_PCI_PCI_QMP_H
#define HW_PCI_PCI_QMP_H

#include <glib.h>
#include <json-glib/json-glib.h>

/* The PCI buses without a parent bridge (PCIBus *). */
GPtrArray *pci_root_buses(void);
/* query-pci's answer: one PciInfo per root bus. */
JsonArray *pci_query(void);
/* HMP "info pci". */
char *pci_info_text(void);

#endif
