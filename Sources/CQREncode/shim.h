#ifndef CQRENCODE_SHIM_H
#define CQRENCODE_SHIM_H
#include <errno.h>
#include <stddef.h>
#include <qrencode.h>

/* libqrencode reports why it returned NULL in errno. Read it here, in C, right after the call:
   in Swift, the runtime may run (and set errno) between a C call and the next statement. */

/// QRcode_encodeString with the smallest version that fits, 8-bit hint, case-sensitive.
/// On NULL, *error is errno (EINVAL, ENOMEM, ERANGE: too large).
static inline QRcode *cqrencode_encode_string(const char *string, QRecLevel level, int *error) {
    errno = 0;
    QRcode *code = QRcode_encodeString(string, 0, level, QR_MODE_8, 1);
    *error = code == NULL ? errno : 0;
    return code;
}

/// QRcode_encodeData (8-bit mode, NUL bytes allowed) with the smallest version that fits.
/// On NULL, *error is errno (EINVAL, ENOMEM, ERANGE: too large).
static inline QRcode *cqrencode_encode_data(int size, const unsigned char *data, QRecLevel level, int *error) {
    errno = 0;
    QRcode *code = QRcode_encodeData(size, data, 0, level);
    *error = code == NULL ? errno : 0;
    return code;
}

/* errno values, so that the wrapper needs no import of the C library's module. */
static const int CQRENCODE_EINVAL = EINVAL;
static const int CQRENCODE_ENOMEM = ENOMEM;
static const int CQRENCODE_ERANGE = ERANGE;
#endif
