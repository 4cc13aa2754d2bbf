#include "trace/trace-accel_qtest.h"
