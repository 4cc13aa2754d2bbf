/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GDT selectors shared by entry.S and C (the layout is fixed in entry.S). */
#ifndef GUEST_SEGMENTS_H
#define GUEST_SEGMENTS_H

#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define USER_DS   (0x18 | 3)
#define USER_CS   (0x20 | 3)
#define TSS_SEL   0x28

#endif
