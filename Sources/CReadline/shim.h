#ifndef CREADLINE_SHIM_H
#define CREADLINE_SHIM_H
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <readline/readline.h>
#include <readline/history.h>

/* readline's globals, reached through functions: Swift 6 refuses to touch a C global variable. */
static inline void creadline_set_completion(rl_compentry_func_t *generator) { rl_completion_entry_function = generator; }
static inline const char *creadline_line_buffer(void) { return rl_line_buffer; }
static inline int creadline_point(void) { return rl_point; }
static inline void creadline_flush_stdout(void) { fflush(stdout); }

/* The editor handles signals itself (a handler that wakes its thread): readline must install none,
   in the callback interface its handlers would only run inside rl_callback_read_char. */
static inline void creadline_leave_signals_to_caller(void) {
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
}

/* Text written where readline writes (stdout), or to stderr after what stdout holds. */
static inline void creadline_write(const char *text, int to_error) {
    if (to_error) {
        fflush(stdout);
        fputs(text, stderr);
        fflush(stderr);
    } else {
        fputs(text, stdout);
        fflush(stdout);
    }
}

/* `handler` for `signal`, restarting interrupted system calls of other threads. */
static inline int creadline_catch_signal(int signal, void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(signal, &action, NULL);
}

/* The default action for `signal`, then the signal raised on this thread (which ends or stops
   the process; a stopped process comes back from here when continued). */
static inline void creadline_raise_default(int signal) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(signal);
}

/* The terminal at `fd` without echo, line editing or special characters other than the
   signals' (kept in `saved` for creadline_restore_terminal); -1 when `fd` is not a terminal. */
static inline int creadline_secret_mode(int fd, struct termios *saved) {
    if (tcgetattr(fd, saved) != 0) return -1;
    struct termios quiet = *saved;
    quiet.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ICANON | IEXTEN);
    quiet.c_iflag &= ~(IXON | ICRNL | INLCR);
    quiet.c_cc[VMIN] = 1;
    quiet.c_cc[VTIME] = 0;
    return tcsetattr(fd, TCSADRAIN, &quiet);
}

static inline void creadline_restore_terminal(int fd, const struct termios *saved) {
    tcsetattr(fd, TCSADRAIN, saved);
}
#endif
