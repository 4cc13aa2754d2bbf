#include "trace/trace-hw_core.h"
