#include "trace/trace-hw_i386.h"
