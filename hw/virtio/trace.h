#include "trace/trace-hw_virtio.h"
