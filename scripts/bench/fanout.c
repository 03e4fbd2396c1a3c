/*
 * The live fan-out benchmark's client (issue 31; run by scripts/bench.sh --only fanout).
 *
 * One process, one epoll loop, one monotonic clock for the posters and the watchers, so the delay
 * from a POST's OK being read to each EVENT of that pin being read is measured without any clock
 * between machines or processes:
 *
 *   1. opens the --posters connections, each REGISTERing a user (a password hash each: done
 *      first, so that neither the memory figures nor the posting window see it), then reads the
 *      daemon's RSS (/proc/<pid>/status) with no other connections of ours;
 *   2. opens --watchers connections (at most 256 connecting at once), each answering a PING, and
 *      reads the RSS again (idle connections, no watches);
 *   3. sends one `WATCH lat lon radius` on each (a random circle whose centre is uniform in the
 *      --box-km square around --lat/--lon), waits for every OK, reads the RSS again;
 *   4. the posters POST at --rate pins a second in all, open
 *      loop (the n-th at start + n/rate, on the next poster in turn with no POST outstanding, else
 *      the one with fewest: pipelined, so a slow reply does not delay the next send), uniform in
 *      the same square, for --seconds; the text carries the post's number ("fo#<n>#"), found again
 *      in each EVENT. The daemon runs a connection's database commands one after another, so one
 *      connection's POSTs queue behind each other: at 4 posters and ~20 ms a POST, 200/s is that
 *      ceiling, and the queue (not the fan-out) would be measured; hence 32 by default;
 *   5. waits for the OKs still outstanding, keeps reading for --drain seconds after the last, prints one line of key=value
 *      figures on stdout (and the daemon's CPU, utime+stime of /proc/<pid>/stat, over the posting
 *      window and the drain).
 *
 * Its own lag is measured and printed: how late each POST was sent against its schedule
 * (send_lag_p99_ms, send_lag_max_ms) and its CPU (client_cpu_pct). A late client inflates the
 * delays it measures, never deflates them.
 * Deliveries are checked pair by pair (each pin against each circle, haversine): missing (inside
 * a circle by more than 1 m, never delivered to it), stray (delivered to a circle it is outside
 * of by more than 1 m) and duplicates are counted; pins within 1 m of a circle's edge count
 * neither way (the daemon's distance and ours may round differently).
 *
 *   fanout --port P --daemon-pid PID [--host 127.0.0.1] [--watchers 10000] [--rate 200]
 *          [--seconds 10] [--posters 32] [--radius 500] [--lat 52.52] [--lon 13.405] [--box-km 10]
 *          [--seed 1] [--drain 2] [--settle 1]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fanout: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *xmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

/* xorshift64*: the same circles and pins for the same seed. */
static uint64_t rng_state = 1;
static double rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static long rss_kb(int pid) {
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s", path);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    fclose(f);
    return kb;
}

static double cpu_s(int pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) die("bad %s", path);
    unsigned long ut = 0, st = 0;
    /* after ") ": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) die("bad %s", path);
    return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static const char *host = "127.0.0.1";
static int port = 0;

static int tcp_open(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) die("bad --host %s", host);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) die("connect: %s", strerror(errno));
    return fd;
}

enum { ST_CONNECTING, ST_PING, ST_IDLE, ST_WATCH, ST_WATCHING, ST_REGISTER, ST_POSTING };

struct conn {
    int fd, state, poster;
    char *in;
    size_t inlen, incap;
    char *out;
    size_t outlen, outcap;
    /* posters: the numbers of the POSTs sent and not yet answered, in order */
    int *fifo;
    size_t fhead, ftail, fcap;
    double lat, lon; /* watchers: the circle's centre */
};

static struct conn *conns;
static int nconns, nwatchers, nposters;
static int ep;
static int ready_count; /* connections past the current step */

static void want_write(struct conn *c, int on) {
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u32 = (uint32_t)(c - conns)};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
}

static void flush_out(struct conn *c) {
    while (c->outlen > 0) {
        ssize_t n = write(c->fd, c->out, c->outlen);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) { want_write(c, 1); return; }
            die("write: %s", strerror(errno));
        }
        memmove(c->out, c->out + n, c->outlen - n);
        c->outlen -= n;
    }
    want_write(c, 0);
}

static void send_line(struct conn *c, const char *s, size_t n) {
    if (c->outlen + n > c->outcap) {
        c->outcap = (c->outlen + n) * 2;
        c->out = realloc(c->out, c->outcap);
        if (!c->out) die("out of memory");
    }
    int was_empty = c->outlen == 0;
    memcpy(c->out + c->outlen, s, n);
    c->outlen += n;
    if (was_empty) flush_out(c);
}

/* Figures */
static double *ok_at;      /* post n's OK read at (0: not yet) */
static double *sched_at;   /* post n's scheduled send time */
static double *plat, *plon;
static int nposts, posts_cap, posts_ok, post_errors;
static double *send_lag, *sent_at;
struct ev { int post, watcher; double at; };
static struct ev *events;
static size_t nevents, events_cap;
static long other_events, overflow_events;
static int watching_phase;

static void on_line(struct conn *c, char *line, size_t len, double t) {
    line[len] = 0;
    if (!strncmp(line, "EVENT ", 6)) {
        if (strstr(line, "\"type\":\"overflow\"")) { overflow_events++; return; }
        char *m = strstr(line, "fo#");
        if (!m || !strstr(line, "\"type\":\"pin\"")) { other_events++; return; }
        int n = atoi(m + 3);
        if (nevents == events_cap) {
            events_cap = events_cap ? events_cap * 2 : 1 << 16;
            events = realloc(events, events_cap * sizeof *events);
            if (!events) die("out of memory");
        }
        events[nevents].post = n;
        events[nevents].watcher = (int)(c - conns);
        events[nevents].at = t;
        nevents++;
        return;
    }
    switch (c->state) {
    case ST_PING:
        if (strcmp(line, "OK \"PONG\"")) die("PING: %s", line);
        c->state = ST_IDLE;
        ready_count++;
        break;
    case ST_WATCH:
        if (strncmp(line, "OK {\"watch\"", 11)) die("WATCH: %s", line);
        c->state = ST_WATCHING;
        ready_count++;
        break;
    case ST_REGISTER:
        if (strncmp(line, "OK", 2)) die("REGISTER: %s", line);
        c->state = ST_POSTING;
        ready_count++;
        break;
    case ST_POSTING:
        if (c->fhead == c->ftail) die("a reply with no POST outstanding: %s", line);
        int n = c->fifo[c->fhead++ % c->fcap];
        if (!strncmp(line, "OK", 2)) {
            ok_at[n] = t;
            posts_ok++;
        } else {
            post_errors++;
            if (post_errors <= 3) fprintf(stderr, "fanout: POST: %s\n", line);
        }
        break;
    default:
        die("unexpected line on a connection in state %d: %s", c->state, line);
    }
}

static void on_readable(struct conn *c) {
    for (;;) {
        if (c->incap - c->inlen < 4096) {
            c->incap *= 2;
            c->in = realloc(c->in, c->incap);
            if (!c->in) die("out of memory");
        }
        ssize_t n = read(c->fd, c->in + c->inlen, c->incap - c->inlen - 1);
        if (n == 0) die("the daemon closed a connection (state %d)", c->state);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            die("read: %s", strerror(errno));
        }
        double t = now_s();
        c->inlen += n;
        size_t start = 0;
        for (size_t i = c->inlen - n; i < c->inlen; i++) {
            if (c->in[i] == '\n') {
                on_line(c, c->in + start, i - start, t);
                start = i + 1;
            }
        }
        if (start) {
            memmove(c->in, c->in + start, c->inlen - start);
            c->inlen -= start;
        }
        if ((size_t)n < c->incap - c->inlen - 1) break;
    }
}

static void poll_once(int timeout_ms) {
    struct epoll_event evs[512];
    int n = epoll_wait(ep, evs, 512, timeout_ms);
    if (n < 0) {
        if (errno == EINTR) return;
        die("epoll_wait: %s", strerror(errno));
    }
    for (int i = 0; i < n; i++) {
        struct conn *c = &conns[evs[i].data.u32];
        if (c->state == ST_CONNECTING) {
            int err = 0;
            socklen_t l = sizeof err;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
            if (err) die("connect: %s", strerror(err));
            c->state = ST_PING;
            want_write(c, 0);
            send_line(c, "PING\n", 5);
            continue;
        }
        if (evs[i].events & (EPOLLERR | EPOLLHUP) && !(evs[i].events & EPOLLIN)) die("connection error (state %d)", c->state);
        if (evs[i].events & EPOLLOUT) flush_out(c);
        if (evs[i].events & EPOLLIN) on_readable(c);
    }
}

static void wait_ready(int want, double timeout, const char *what) {
    double t0 = now_s();
    while (ready_count < want) {
        if (now_s() - t0 > timeout) die("%s: %d of %d after %.0f s", what, ready_count, want, timeout);
        poll_once(100);
    }
}

static void open_conn(int i) {
    struct conn *c = &conns[i];
    c->fd = tcp_open();
    c->state = ST_CONNECTING;
    c->incap = 8192;
    c->in = xmalloc(c->incap);
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
}

/* Connections i0..i1-1, at most 256 not yet answered at once (the listen backlog is finite). */
static void open_conns(int i0, int i1) {
    int base = ready_count, next = i0;
    double t0 = now_s();
    while (ready_count - base < i1 - i0) {
        while (next < i1 && next - i0 - (ready_count - base) < 256) open_conn(next++);
        poll_once(100);
        if (now_s() - t0 > 300) die("connections: %d of %d after 300 s", ready_count - base, i1 - i0);
    }
}

static double haversine_m(double la1, double lo1, double la2, double lo2) {
    double r = M_PI / 180, dla = (la2 - la1) * r, dlo = (lo2 - lo1) * r;
    double a = sin(dla / 2) * sin(dla / 2) + cos(la1 * r) * cos(la2 * r) * sin(dlo / 2) * sin(dlo / 2);
    return 2 * 6371008.8 * asin(sqrt(a));
}

static int cmp_ev(const void *a, const void *b) {
    const struct ev *x = a, *y = b;
    if (x->post != y->post) return x->post < y->post ? -1 : 1;
    return x->watcher < y->watcher ? -1 : x->watcher > y->watcher;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double pct(double *v, size_t n, double p) {
    if (!n) return 0;
    size_t i = (size_t)ceil(p * n) - 1;
    if (i >= n) i = n - 1;
    return v[i];
}

int main(int argc, char **argv) {
    int daemon_pid = 0;
    double rate = 200, seconds = 10, radius = 500, clat = 52.52, clon = 13.405, box_km = 10, drain = 2, settle = 1;
    unsigned long seed = 1;
    nwatchers = 10000;
    nposters = 32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die("%s needs a value", a);
        i++;
        if (!strcmp(a, "--host")) host = v;
        else if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--daemon-pid")) daemon_pid = atoi(v);
        else if (!strcmp(a, "--watchers")) nwatchers = atoi(v);
        else if (!strcmp(a, "--posters")) nposters = atoi(v);
        else if (!strcmp(a, "--rate")) rate = atof(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--radius")) radius = atof(v);
        else if (!strcmp(a, "--lat")) clat = atof(v);
        else if (!strcmp(a, "--lon")) clon = atof(v);
        else if (!strcmp(a, "--box-km")) box_km = atof(v);
        else if (!strcmp(a, "--seed")) seed = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--drain")) drain = atof(v);
        else if (!strcmp(a, "--settle")) settle = atof(v);
        else die("unknown argument %s", a);
    }
    if (!port || !daemon_pid) die("--port and --daemon-pid are required");
    if (nwatchers < 1 || nposters < 1 || rate <= 0 || seconds <= 0) die("bad arguments");
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    double dlat = box_km / 2 / 111.32, dlon = box_km / 2 / (111.32 * cos(clat * M_PI / 180));

    nconns = nwatchers + nposters;
    conns = xmalloc(sizeof *conns * nconns);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1: %s", strerror(errno));

    char line[256];
    /* Posters first: their REGISTERs (a password hash each, CPU- and memory-hungry) are over
     * before the baseline RSS is read and long before the posting window. */
    open_conns(nwatchers, nconns);
    ready_count = 0;
    unsigned long stamp = (unsigned long)time(NULL);
    for (int i = nwatchers; i < nconns; i++) {
        struct conn *c = &conns[i];
        c->poster = 1;
        c->state = ST_REGISTER;
        c->fcap = 1 << 16;
        c->fifo = xmalloc(sizeof(int) * c->fcap);
        int n = snprintf(line, sizeof line, "REGISTER fo%08lx%06x_%d fo%08lx%06x_%d@bench.invalid bench-pass-%d\n", stamp,
                         getpid() & 0xffffff, i, stamp, getpid() & 0xffffff, i, i);
        send_line(c, line, n);
    }
    wait_ready(nposters, 60, "REGISTER replies");

    ready_count = 0;
    usleep((useconds_t)(settle * 1e6));
    long rss0 = rss_kb(daemon_pid);
    double t_conn = now_s();
    open_conns(0, nwatchers);
    double conn_s = now_s() - t_conn;
    usleep((useconds_t)(settle * 1e6));
    long rss_idle = rss_kb(daemon_pid);

    ready_count = 0;
    double t_watch = now_s();
    for (int i = 0; i < nwatchers; i++) {
        struct conn *c = &conns[i];
        c->lat = clat + (rnd() * 2 - 1) * dlat;
        c->lon = clon + (rnd() * 2 - 1) * dlon;
        c->state = ST_WATCH;
        int n = snprintf(line, sizeof line, "WATCH %.6f %.6f %.0f\n", c->lat, c->lon, radius);
        send_line(c, line, n);
        if (i % 256 == 255) poll_once(0);
    }
    wait_ready(nwatchers, 300, "WATCH replies");
    double watch_s = now_s() - t_watch;
    watching_phase = 1;
    usleep((useconds_t)(settle * 1e6));
    /* the event queue holds nothing yet: the OKs only */
    long rss_watch = rss_kb(daemon_pid);

    posts_cap = (int)(rate * seconds) + 1;
    ok_at = xmalloc(sizeof(double) * posts_cap);
    sched_at = xmalloc(sizeof(double) * posts_cap);
    send_lag = xmalloc(sizeof(double) * posts_cap);
    sent_at = xmalloc(sizeof(double) * posts_cap);
    plat = xmalloc(sizeof(double) * posts_cap);
    plon = xmalloc(sizeof(double) * posts_cap);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double cpu0 = cpu_s(daemon_pid);
    double t0 = now_s() + 0.05;
    double t_end = t0 + seconds;
    while (nposts < posts_cap) {
        double due = t0 + nposts / rate;
        if (due >= t_end) break;
        double t = now_s();
        if (t >= due) {
            int n = nposts;
            /* the next poster in turn with nothing outstanding, else the one with least */
            struct conn *c = NULL;
            for (int k = 0; k < nposters; k++) {
                struct conn *p = &conns[nwatchers + (n + k) % nposters];
                if (!c || p->ftail - p->fhead < c->ftail - c->fhead) c = p;
                if (c->ftail == c->fhead) break;
            }
            plat[n] = clat + (rnd() * 2 - 1) * dlat;
            plon[n] = clon + (rnd() * 2 - 1) * dlon;
            sched_at[n] = due;
            send_lag[n] = t - due;
            sent_at[n] = t;
            if (c->ftail - c->fhead >= c->fcap) die("more than %zu POSTs outstanding on one connection", c->fcap);
            c->fifo[c->ftail++ % c->fcap] = n;
            nposts++;
            int len = snprintf(line, sizeof line, "POST %.6f %.6f \"fan-out bench fo#%d#\"\n", plat[n], plon[n], n);
            send_line(c, line, len);
            continue;
        }
        int ms = (int)((due - t) * 1000);
        poll_once(ms);
    }
    /* The drain: the OKs still outstanding (up to 30 s), then --drain seconds after the last of
     * them for its events. */
    double t_last = now_s();
    while (posts_ok + post_errors < nposts && now_s() < t_last + 30) poll_once(50);
    double t_drain = now_s();
    while (now_s() < t_drain + drain) poll_once(50);
    double cpu1 = cpu_s(daemon_pid);
    double window = now_s() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    double client_cpu = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
                        (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;

    /* Delays: EVENT read − OK read. An event read before its OK (possible: the OK and the events
     * leave the daemon independently) counts as 0 and is counted apart. */
    double *d = xmalloc(sizeof(double) * (nevents + 1));
    size_t nd = 0, before_ok = 0, no_ok = 0;
    for (size_t i = 0; i < nevents; i++) {
        int n = events[i].post;
        if (n < 0 || n >= nposts) { other_events++; continue; }
        if (ok_at[n] == 0) { no_ok++; continue; }
        double x = events[i].at - ok_at[n];
        if (x < 0) { before_ok++; x = 0; }
        d[nd++] = x * 1000;
    }
    qsort(d, nd, sizeof *d, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < nd; i++) sum += d[i];
    qsort(send_lag, nposts, sizeof *send_lag, cmp_double);
    /* POST latency: its OK read − its send (not its schedule: the send lag is apart) */
    double *pl = xmalloc(sizeof(double) * (nposts + 1));
    size_t npl = 0;
    for (int n = 0; n < nposts; n++)
        if (ok_at[n] > 0) pl[npl++] = (ok_at[n] - sent_at[n]) * 1000;
    qsort(pl, npl, sizeof *pl, cmp_double);

    /* Expected deliveries, pair by pair (pin, watcher): missing = inside the circle (by more than
     * 1 m) and never delivered; stray = delivered to a watcher whose circle it is outside by more
     * than 1 m (or on a poster's connection); duplicate = delivered twice to one watcher. */
    long expected = 0, edge = 0, missing = 0, stray = 0, dup = 0;
    qsort(events, nevents, sizeof *events, cmp_ev);
    for (size_t i = 0; i < nevents; i++) {
        struct ev *e = &events[i];
        if (i > 0 && e->post == e[-1].post && e->watcher == e[-1].watcher) dup++;
        if (e->post < 0 || e->post >= nposts || e->watcher >= nwatchers) { stray++; continue; }
        if (haversine_m(plat[e->post], plon[e->post], conns[e->watcher].lat, conns[e->watcher].lon) > radius + 1) stray++;
    }
    for (int n = 0; n < nposts; n++) {
        if (ok_at[n] == 0) continue;
        for (int w = 0; w < nwatchers; w++) {
            double x = haversine_m(plat[n], plon[n], conns[w].lat, conns[w].lon);
            if (fabs(x - radius) <= 1) edge++;
            else if (x < radius) {
                expected++;
                struct ev key = {.post = n, .watcher = w};
                if (!bsearch(&key, events, nevents, sizeof *events, cmp_ev)) {
                    missing++;
                    if (missing <= 20)
                        fprintf(stderr, "fanout: missing: pin fo#%d# (%.6f %.6f, OK %.3f s into the run) for watcher %d "
                                "(%.6f %.6f): %.1f m from its centre\n", n, plat[n], plon[n], ok_at[n] - t0, w,
                                conns[w].lat, conns[w].lon, x);
                }
            }
        }
    }

    printf("watchers=%d posters=%d rate=%.0f seconds=%.1f radius_m=%.0f box_km=%.1f"
           " connect_s=%.2f watch_s=%.2f rss_before_kb=%ld rss_idle_kb=%ld rss_watch_kb=%ld"
           " idle_conn_bytes=%.0f watch_conn_bytes=%.0f"
           " posts=%d posts_ok=%d post_errors=%d achieved_rate=%.1f events=%zu expected=%ld edge=%ld missing=%ld stray=%ld duplicates=%ld"
           " events_before_ok=%zu events_no_ok=%zu other_events=%ld overflows=%ld"
           " p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f mean_ms=%.2f"
           " daemon_cpu_s=%.2f window_s=%.2f cpu_us_per_event=%.2f daemon_cpu_pct=%.1f"
           " post_p50_ms=%.2f post_p99_ms=%.2f post_max_ms=%.2f send_lag_p99_ms=%.2f send_lag_max_ms=%.2f client_cpu_pct=%.1f\n",
           nwatchers, nposters, rate, seconds, radius, box_km, conn_s, watch_s, rss0, rss_idle, rss_watch,
           (rss_idle - rss0) * 1024.0 / nwatchers, (rss_watch - rss0) * 1024.0 / nwatchers, nposts, posts_ok,
           post_errors, posts_ok / seconds, nevents, expected, edge, missing, stray, dup, before_ok, no_ok, other_events, overflow_events,
           pct(d, nd, .5), pct(d, nd, .9), pct(d, nd, .99), pct(d, nd, .999), nd ? d[nd - 1] : 0, nd ? sum / nd : 0,
           cpu1 - cpu0, window, nd ? (cpu1 - cpu0) * 1e6 / nd : 0, (cpu1 - cpu0) * 100 / window,
           pct(pl, npl, .5), pct(pl, npl, .99), npl ? pl[npl - 1] : 0, pct(send_lag, nposts, .99) * 1000, nposts ? send_lag[nposts - 1] * 1000 : 0, client_cpu * 100 / window);
    return 0;
}
