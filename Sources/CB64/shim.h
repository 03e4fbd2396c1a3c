#ifndef CB64_SHIM_H
#define CB64_SHIM_H
/* The C headers only: encode.h and decode.h beside them are C++. */
#include <b64/cencode.h>
#include <b64/cdecode.h>
#endif
