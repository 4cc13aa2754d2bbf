#include "trace/trace-contrib_vfio_user_libvfu.h"
