#include "trace/trace-hw_vfio_user.h"
