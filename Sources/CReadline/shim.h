#ifndef CREADLINE_SHIM_H
#define CREADLINE_SHIM_H
#include <stdio.h>
#include <readline/readline.h>
#include <readline/history.h>

/* readline's globals, reached through functions: Swift 6 refuses to touch a C global variable. */
static inline void creadline_set_completion(rl_compentry_func_t *generator) { rl_completion_entry_function = generator; }
static inline const char *creadline_line_buffer(void) { return rl_line_buffer; }
static inline int creadline_point(void) { return rl_point; }
static inline void creadline_flush_stdout(void) { fflush(stdout); }
#endif
