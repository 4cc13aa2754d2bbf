/* Placeholder until the command-line front end lands. */
#include "qemu/osdep.h"
#include "sysemu/sysemu.h"
#include "qemu/error-report.h"

int qemu_main(int argc, char **argv)
{
    error_set_progname(argv[0]);
    error_report("not implemented yet");
    return 1;
}
