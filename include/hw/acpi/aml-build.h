/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small builder for ACPI Machine Language (ACPI 6.5, chapter 20), enough
 * for the DSDT of a firmware-less machine: named objects, scopes, devices,
 * methods with a few operators, packages, buffers and resource templates
 * (chapter 6.4).
 *
 * An Aml is a node whose encoding is known once its children are: a
 * container (Scope, Device, Method, If, Else, Package, Buffer) gets its
 * PkgLength when it is appended to its parent or serialized.  aml_append()
 * takes ownership of the child; every constructor returns a new node.
 */
#ifndef HW_ACPI_AML_BUILD_H
#define HW_ACPI_AML_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

typedef struct Aml Aml;

/* Appends child (consumed) to parent's body. */
void aml_append(Aml *parent, Aml *child);
/* The node's complete encoding (with PkgLength); consumes aml. */
GByteArray *aml_serialize(Aml *aml);
void aml_free(Aml *aml);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Aml, aml_free)

/* A bare list of terms (e.g. a table body): no opcode, no PkgLength. */
Aml *aml_list(void);

/* PkgLength encoding of a body of body_len bytes (20.2.4); returns bytes. */
size_t aml_pkg_length(uint8_t out[4], size_t body_len);

/*
 * NameString (20.2.2): "PCI0", "\\_SB.PCI0", "^FOO".  Segments shorter
 * than four characters are padded with '_'.  Returns false (and encodes
 * nothing) if a segment is longer than four or uses other characters
 * than A-Z, 0-9, '_'.
 */
bool aml_encode_namestring(GByteArray *out, const char *name);

/* Data objects. */
Aml *aml_int(uint64_t value);           /* Zero/One/Ones or the smallest prefix */
Aml *aml_string(const char *str);
Aml *aml_eisaid(const char *id);        /* "PNP0A03" -> compressed DWord */
Aml *aml_touuid(const char *uuid);      /* ToUUID(): a 16-byte Buffer */
Aml *aml_buffer(const uint8_t *data, size_t len);
Aml *aml_package(void);                 /* append the elements */
Aml *aml_name(const char *name);        /* a reference by NameString */
Aml *aml_arg(unsigned n);               /* Arg0..Arg6 */
Aml *aml_local(unsigned n);             /* Local0..Local7 */

/* Named objects and containers. */
Aml *aml_name_decl(const char *name, Aml *value);
Aml *aml_scope(const char *name);
Aml *aml_device(const char *name);
Aml *aml_method(const char *name, unsigned nargs, bool serialized);

/* Statements and expressions. */
Aml *aml_if(Aml *predicate);
Aml *aml_else(void);
Aml *aml_return(Aml *value);
Aml *aml_store(Aml *src, Aml *dst);
Aml *aml_and(Aml *a, Aml *b, Aml *target);    /* target may be NULL */
Aml *aml_or(Aml *a, Aml *b, Aml *target);
Aml *aml_lequal(Aml *a, Aml *b);
Aml *aml_create_dword_field(Aml *buf, Aml *index, const char *name);
Aml *aml_notify(Aml *object, Aml *value);

/*
 * ResourceTemplate(): a Buffer of descriptors closed by the End Tag.
 * Append the descriptors below to it.
 */
Aml *aml_resource_template(void);
Aml *aml_io(uint16_t min, uint16_t max, uint8_t align, uint8_t len);
Aml *aml_irq_no_flags(unsigned irq);
Aml *aml_memory32_fixed(uint32_t base, uint32_t len, bool rw);
/* Producer windows of a bridge: MinFixed, MaxFixed, PosDecode. */
Aml *aml_word_bus_number(uint16_t min, uint16_t max);
Aml *aml_word_io(uint16_t min, uint16_t max);
Aml *aml_dword_memory(uint32_t min, uint32_t max);
Aml *aml_qword_memory(uint64_t min, uint64_t max);

#endif
