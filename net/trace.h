#include "trace/trace-net.h"
