#include "libguest.h"
int main(void) { return report_summary(); }
