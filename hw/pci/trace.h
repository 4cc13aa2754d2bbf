#include "trace/trace-hw_pci.h"
