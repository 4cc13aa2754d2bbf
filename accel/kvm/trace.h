#include "trace/trace-accel_kvm.h"
