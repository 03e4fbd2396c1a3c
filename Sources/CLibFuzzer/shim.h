#ifndef CLIBFUZZER_SHIM_H
#define CLIBFUZZER_SHIM_H
/* libFuzzer's driver, as its FuzzerInterface.h declares it. No library to link: `-sanitize=fuzzer`
   links libFuzzer, and only a build with that flag (scripts/fuzz.sh) calls this. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
