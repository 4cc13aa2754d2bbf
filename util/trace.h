#include "trace/trace-util.h"
