/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "trace/trace-contrib_vfio_user_nvme.h"
