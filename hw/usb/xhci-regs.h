/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xHCI register, context and TRB layouts (eXtensible Host Controller
 * Interface 1.2, chapters 5 and 6) as qemu-xhci lays out its BAR 0,
 * shared by the controller (hcd-xhci.c) and its qtest driver.
 */
#ifndef HW_USB_XHCI_REGS_H
#define HW_USB_XHCI_REGS_H

/* BAR 0 (16 KiB). */
#define XHCI_CAPLENGTH 0x40
#define XHCI_OPER XHCI_CAPLENGTH
#define XHCI_PORTS_OFF (XHCI_OPER + 0x400)
#define XHCI_EXTCAP_OFF 0x20        /* in bytes: caps start here */
#define XHCI_RUNTIME_OFF 0x1000
#define XHCI_DOORBELL_OFF 0x2000
#define XHCI_MSIX_OFF 0x3000
#define XHCI_MSIX_PBA_OFF 0x3800
#define XHCI_BAR_SIZE 0x4000

/* Capability registers. */
#define XHCI_CAP_HCIVERSION 0x02
#define XHCI_CAP_HCSPARAMS1 0x04
#define XHCI_CAP_HCSPARAMS2 0x08
#define XHCI_CAP_HCSPARAMS3 0x0c
#define XHCI_CAP_HCCPARAMS1 0x10
#define XHCI_CAP_DBOFF 0x14
#define XHCI_CAP_RTSOFF 0x18
#define XHCI_CAP_HCCPARAMS2 0x1c

/* Operational registers (from XHCI_OPER). */
#define XHCI_USBCMD 0x00
#define XHCI_USBSTS 0x04
#define XHCI_PAGESIZE 0x08
#define XHCI_DNCTRL 0x14
#define XHCI_CRCR 0x18
#define XHCI_DCBAAP 0x30
#define XHCI_CONFIG 0x38

#define XHCI_CMD_RS (1u << 0)
#define XHCI_CMD_HCRST (1u << 1)
#define XHCI_CMD_INTE (1u << 2)
#define XHCI_CMD_HSEE (1u << 3)
#define XHCI_CMD_EWE (1u << 10)

#define XHCI_STS_HCH (1u << 0)
#define XHCI_STS_HSE (1u << 2)
#define XHCI_STS_EINT (1u << 3)
#define XHCI_STS_PCD (1u << 4)
#define XHCI_STS_CNR (1u << 11)
#define XHCI_STS_HCE (1u << 12)

#define XHCI_CRCR_RCS (1ull << 0)
#define XHCI_CRCR_CS (1ull << 1)
#define XHCI_CRCR_CA (1ull << 2)
#define XHCI_CRCR_CRR (1ull << 3)

/* Port registers (0x10 each from XHCI_PORTS_OFF). */
#define XHCI_PORT_CCS (1u << 0)
#define XHCI_PORT_PED (1u << 1)
#define XHCI_PORT_PR (1u << 4)
#define XHCI_PORT_PLS_SHIFT 5
#define XHCI_PORT_PLS_MASK (0xfu << 5)
#define XHCI_PORT_PP (1u << 9)
#define XHCI_PORT_SPEED_SHIFT 10
#define XHCI_PORT_SPEED_MASK (0xfu << 10)
#define XHCI_PORT_LWS (1u << 16)
#define XHCI_PORT_CSC (1u << 17)
#define XHCI_PORT_PEC (1u << 18)
#define XHCI_PORT_WRC (1u << 19)
#define XHCI_PORT_OCC (1u << 20)
#define XHCI_PORT_PRC (1u << 21)
#define XHCI_PORT_PLC (1u << 22)
#define XHCI_PORT_CEC (1u << 23)
#define XHCI_PORT_CHANGES (XHCI_PORT_CSC | XHCI_PORT_PEC | XHCI_PORT_WRC | \
                           XHCI_PORT_OCC | XHCI_PORT_PRC | XHCI_PORT_PLC | \
                           XHCI_PORT_CEC)
#define XHCI_PORT_WAKE_MASK (7u << 25)
#define XHCI_PORT_WPR (1u << 31)

#define XHCI_PLS_U0 0
#define XHCI_PLS_U3 3
#define XHCI_PLS_DISABLED 4
#define XHCI_PLS_RXDETECT 5
#define XHCI_PLS_POLLING 7
#define XHCI_PLS_RESUME 15

#define XHCI_SPEED_FULL 1
#define XHCI_SPEED_LOW 2
#define XHCI_SPEED_HIGH 3

/* Runtime: interrupter 0 at XHCI_RUNTIME_OFF + 0x20. */
#define XHCI_MFINDEX 0x00
#define XHCI_INTR0 0x20
#define XHCI_IMAN 0x00
#define XHCI_IMOD 0x04
#define XHCI_ERSTSZ 0x08
#define XHCI_ERSTBA 0x10
#define XHCI_ERDP 0x18

#define XHCI_IMAN_IP (1u << 0)
#define XHCI_IMAN_IE (1u << 1)
#define XHCI_ERDP_EHB (1ull << 3)

/* TRBs. */
#define TRB_C (1u << 0)
#define TRB_TC (1u << 1)        /* link: toggle cycle */
#define TRB_ENT (1u << 1)
#define TRB_ISP (1u << 2)
#define TRB_CH (1u << 4)
#define TRB_IOC (1u << 5)
#define TRB_IDT (1u << 6)
#define TRB_BSR (1u << 9)       /* address device: block SET_ADDRESS */
#define TRB_DC (1u << 9)        /* configure endpoint: deconfigure */
#define TRB_DIR_IN (1u << 16)
#define TRB_TYPE_SHIFT 10
#define TRB_TYPE(ctrl) (((ctrl) >> 10) & 0x3f)

#define TRB_NORMAL 1
#define TRB_SETUP 2
#define TRB_DATA 3
#define TRB_STATUS 4
#define TRB_ISOCH 5
#define TRB_LINK 6
#define TRB_EVENT_DATA 7
#define TRB_NOOP 8
#define TRB_CMD_ENABLE_SLOT 9
#define TRB_CMD_DISABLE_SLOT 10
#define TRB_CMD_ADDRESS_DEVICE 11
#define TRB_CMD_CONFIGURE_EP 12
#define TRB_CMD_EVALUATE_CTX 13
#define TRB_CMD_RESET_EP 14
#define TRB_CMD_STOP_EP 15
#define TRB_CMD_SET_TR_DEQUEUE 16
#define TRB_CMD_RESET_DEVICE 17
#define TRB_CMD_NOOP 23
#define TRB_EV_TRANSFER 32
#define TRB_EV_CMD_COMPLETE 33
#define TRB_EV_PORT_STATUS 34
#define TRB_EV_HOST_CONTROLLER 37

/* Completion codes. */
#define CC_SUCCESS 1
#define CC_USB_TRANSACTION_ERROR 4
#define CC_TRB_ERROR 5
#define CC_STALL_ERROR 6
#define CC_NO_SLOTS 9
#define CC_SLOT_NOT_ENABLED 11
#define CC_EP_NOT_ENABLED 12
#define CC_SHORT_PACKET 13
#define CC_EVENT_RING_FULL 21
#define CC_PARAMETER_ERROR 17
#define CC_CONTEXT_STATE_ERROR 19
#define CC_BABBLE 3

/* Contexts (32 bytes each). */
#define XHCI_CTX_SIZE 32
#define SLOT_STATE_SHIFT 27
#define SLOT_DEFAULT 1
#define SLOT_ADDRESSED 2
#define SLOT_CONFIGURED 3
#define EP_DISABLED 0
#define EP_RUNNING 1
#define EP_HALTED 2
#define EP_STOPPED 3
#define EP_ERROR 4
#define EP_TYPE_CONTROL 4
#define EP_TYPE_INT_IN 7

#endif
