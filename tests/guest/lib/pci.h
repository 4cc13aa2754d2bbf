#ifndef GUEST_PCI_H
#define GUEST_PCI_H
#endif
