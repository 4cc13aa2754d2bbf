/* Placeholder until the NVMe server lands. */
#include "qemu/osdep.h"

int main(void)
{
    return 1;
}
