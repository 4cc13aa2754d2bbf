#include "trace/trace-block.h"
