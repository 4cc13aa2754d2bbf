#include "trace/trace-hw_ppc.h"
