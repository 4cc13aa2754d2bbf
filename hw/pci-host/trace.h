#include "trace/trace-hw_pci_host.h"
