/* SPDX-License-Identifier: GPL-2.0-or-later */
/* HMP "info qtree" (hw/core/qdev-qtree.c). */
#ifndef HW_QDEV_QTREE_H
#define HW_QDEV_QTREE_H

char *qdev_qtree_text(void);

#endif
