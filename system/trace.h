#include "trace/trace-system.h"
