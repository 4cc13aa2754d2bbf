#include "trace/trace-hw_char.h"
