/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Serial output and a small printf: %d %i %u %x %X %p %s %c %% with
 * '-', '0' and width, and the l, ll and z length modifiers.
 */
#include "libguest.h"

#define COM1 0x3f8
#define UART_LSR_THRE 0x20

void serial_init(void)
{
    outb(COM1 + 1, 0x00);       /* no interrupts */
    outb(COM1 + 3, 0x80);       /* DLAB */
    outb(COM1 + 0, 0x01);       /* 115200 baud */
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03);       /* 8N1 */
    outb(COM1 + 4, 0x03);       /* DTR | RTS */
}

void serial_putc(char c)
{
    int spins = 100000;

    /* Bounded: a UART that never drains must not hang the test. */
    while (!(inb(COM1 + 5) & UART_LSR_THRE) && --spins) {
        cpu_relax();
    }
    outb(COM1, c);
}

typedef struct Out {
    char *buf;
    size_t size;
    size_t len;
} Out;

static void out_char(Out *o, char c)
{
    if (o->len + 1 < o->size) {
        o->buf[o->len] = c;
    }
    o->len++;
}

static void out_number(Out *o, uint64_t v, unsigned base, bool upper,
                       bool negative, int width, bool zero, bool left)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    int n = 0, pad;

    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v);
    pad = width - n - (negative ? 1 : 0);
    if (!left && !zero) {
        for (; pad > 0; pad--) {
            out_char(o, ' ');
        }
    }
    if (negative) {
        out_char(o, '-');
    }
    if (!left && zero) {
        for (; pad > 0; pad--) {
            out_char(o, '0');
        }
    }
    while (n) {
        out_char(o, tmp[--n]);
    }
    for (; left && pad > 0; pad--) {
        out_char(o, ' ');
    }
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    Out o = { .buf = buf, .size = size };

    for (; *fmt; fmt++) {
        bool zero = false, left = false;
        int width = 0, lng = 0;

        if (*fmt != '%') {
            out_char(&o, *fmt);
            continue;
        }
        fmt++;
        for (;; fmt++) {
            if (*fmt == '0') {
                zero = true;
            } else if (*fmt == '-') {
                left = true;
            } else {
                break;
            }
        }
        while (*fmt >= '0' && *fmt <= '9') {
            width = width * 10 + (*fmt++ - '0');
        }
        while (*fmt == 'l' || *fmt == 'z') {
            lng++;
            fmt++;
        }
        switch (*fmt) {
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            out_number(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, false,
                       v < 0, width, zero, left);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            out_number(&o, v, *fmt == 'u' ? 10 : 16, *fmt == 'X', false,
                       width, zero, left);
            break;
        }
        case 'p':
            out_char(&o, '0');
            out_char(&o, 'x');
            out_number(&o, (uint64_t)va_arg(ap, void *), 16, false, false,
                       width, zero, left);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            int len;

            s = s ? s : "(null)";
            len = strlen(s);
            for (; !left && width > len; width--) {
                out_char(&o, ' ');
            }
            while (*s) {
                out_char(&o, *s++);
            }
            for (; left && width > len; width--) {
                out_char(&o, ' ');
            }
            break;
        }
        case 'c':
            out_char(&o, (char)va_arg(ap, int));
            break;
        case '%':
            out_char(&o, '%');
            break;
        case '\0':
            fmt--;
            break;
        default:
            out_char(&o, '%');
            out_char(&o, *fmt);
            break;
        }
    }
    if (size) {
        buf[o.len < size ? o.len : size - 1] = '\0';
    }
    return o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

void puts(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n') {
            serial_putc('\r');
        }
        serial_putc(*s);
    }
}

int printf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    puts(buf);
    return n;
}
