#include "trace/trace-hw_vfio.h"
