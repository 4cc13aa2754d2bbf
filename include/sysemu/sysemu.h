/* Entry points of the system emulator shared by both target binaries. */
#ifndef SYSEMU_SYSEMU_H
#define SYSEMU_SYSEMU_H

/* Parses the command line, builds the machine and runs the main loop. */
int qemu_main(int argc, char **argv);

#endif
