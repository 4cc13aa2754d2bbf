#include "trace/trace-contrib_vfio_user_nvme.h"
