#include "trace/trace-hw_rtc.h"
