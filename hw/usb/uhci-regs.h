/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UHCI register and schedule layouts (UHCI Design Guide 1.1, chapters 2
 * and 3), shared by the controller (hcd-uhci.c) and its qtest driver.
 */
#ifndef HW_USB_UHCI_REGS_H
#define HW_USB_UHCI_REGS_H

/* I/O registers (BAR 4). */
#define UHCI_USBCMD 0x00
#define UHCI_USBSTS 0x02
#define UHCI_USBINTR 0x04
#define UHCI_FRNUM 0x06
#define UHCI_FLBASEADD 0x08
#define UHCI_SOFMOD 0x0c
#define UHCI_PORTSC1 0x10
#define UHCI_PORTSC2 0x12

/* PCI configuration. */
#define UHCI_PCI_SBRN 0x60
#define UHCI_PCI_LEGSUP 0xc0

#define UHCI_CMD_RS (1u << 0)
#define UHCI_CMD_HCRESET (1u << 1)
#define UHCI_CMD_GRESET (1u << 2)
#define UHCI_CMD_EGSM (1u << 3)
#define UHCI_CMD_FGR (1u << 4)
#define UHCI_CMD_SWDBG (1u << 5)
#define UHCI_CMD_CF (1u << 6)
#define UHCI_CMD_MAXP (1u << 7)

#define UHCI_STS_USBINT (1u << 0)
#define UHCI_STS_ERROR (1u << 1)
#define UHCI_STS_RD (1u << 2)
#define UHCI_STS_HSE (1u << 3)
#define UHCI_STS_HCPE (1u << 4)
#define UHCI_STS_HCH (1u << 5)

#define UHCI_INTR_TOCRC (1u << 0)
#define UHCI_INTR_RESUME (1u << 1)
#define UHCI_INTR_IOC (1u << 2)
#define UHCI_INTR_SPD (1u << 3)

#define UHCI_PORT_CCS (1u << 0)
#define UHCI_PORT_CSC (1u << 1)
#define UHCI_PORT_PE (1u << 2)
#define UHCI_PORT_PEC (1u << 3)
#define UHCI_PORT_LS_DPLUS (1u << 4)
#define UHCI_PORT_RD (1u << 6)
#define UHCI_PORT_ALWAYS1 (1u << 7)
#define UHCI_PORT_LSDA (1u << 8)
#define UHCI_PORT_PR (1u << 9)
#define UHCI_PORT_SUSP (1u << 12)

/* Link pointers. */
#define UHCI_LINK_TERM (1u << 0)
#define UHCI_LINK_QH (1u << 1)
#define UHCI_LINK_DEPTH (1u << 2)

/* TD control and status. */
#define UHCI_TD_ACTLEN_MASK 0x7ffu
#define UHCI_TD_BITSTUFF (1u << 17)
#define UHCI_TD_CRCTO (1u << 18)
#define UHCI_TD_NAK (1u << 19)
#define UHCI_TD_BABBLE (1u << 20)
#define UHCI_TD_DBUF (1u << 21)
#define UHCI_TD_STALLED (1u << 22)
#define UHCI_TD_ACTIVE (1u << 23)
#define UHCI_TD_STATUS_MASK (0xffu << 16)
#define UHCI_TD_IOC (1u << 24)
#define UHCI_TD_IOS (1u << 25)
#define UHCI_TD_LS (1u << 26)
#define UHCI_TD_CERR_MASK (3u << 27)
#define UHCI_TD_SPD (1u << 29)

#endif
