/*
 * loadgen: one closed-loop load generator for scavengerd, Redis and PostgreSQL/PostGIS.
 *
 * Single thread, epoll, N connections, each with exactly one request in flight: a reply is
 * read completely, its latency recorded, and the next request goes out on the same connection
 * at once. Query centres (lat,lon per line) are cycled across all connections. A warm-up runs
 * first and is not recorded; then the run lasts --seconds. Latencies go into a log-linear
 * histogram (64 sub-buckets per power of two, < 1.6 % error), from which p50/p90/p99/p99.9 come.
 * The generator reports its own CPU time (getrusage) for the measured window, and the CPU the
 * servers used in it (--cpu-pids: /proc/PID/stat of each PID and of its direct children, so
 * the postmaster's PID covers every backend).
 *
 *   --target scav   raw lines:   NEARBY lat lon R LIMIT L | POST lat lon "text" |
 *                                POSTPHOTO lat lon <base64> | PING |
 *                                CHECKIN <a line of --walk> | LEADERBOARD hunt LIMIT L |
 *                                LEADERBOARD hunt AROUND | RANKING LIMIT L |
 *                                RANKING AROUND LIMIT L | PROFILE <a random --users name>
 *                   (POST/POSTPHOTO: each connection first REGISTERs a user of its own)
 *                   checkin: every request takes the next line of --walk FILE ("stop lat lon"):
 *                           connection i starts at line i*lines/conns and goes round once; a
 *                           connection that would come back to its first line ends the run with
 *                           an error (a stop checked in at twice is a CONFLICT, not a check-in)
 *                   --setup LINE (repeatable): sent on every connection, in order, before the
 *                           run; each must answer OK. "{conn}" in it is the connection's number
 *                           (0, 1, …), "{value}" its line of --setup-values FILE (e.g. AUTH {value}
 *                           with a session token per line: each connection its own user)
 *                   --expect TEXT: an OK reply without TEXT in it counts as an error too
 *                           (checkin: '"status":"accepted"')
 *   --target redis  raw RESP:    GEOSEARCH key FROMLONLAT lon lat BYRADIUS R m ASC COUNT L WITHDIST |
 *                                ranking: ZREVRANGE key 0 L-1 WITHSCORES |
 *                                ranking-around: ZREVRANK key member, then (once it answers, on the
 *                                  same connection, in the same request's time) ZREVRANGE key s s+L-1
 *                                  WITHSCORES with s = max(0, rank - L/2): the page with the member
 *                                  and up to half of L above it, as RANKING AROUND; the member is
 *                                  connection i's line of --members FILE |
 *                                profile: HGETALL <--hash-prefix><name> and ZREVRANK key <name>,
 *                                  pipelined (sent together, both replies read; one round trip)
 *   ranking-around, profile: a member missing (a nil ZREVRANK, an empty hash, a PROFILE whose rank
 *                   is null) counts as an error.
 *   profile names:  --users N: <--user-prefix><n, --user-digits wide> for n drawn uniformly from 1..N
 *                   by a generator of its own with a fixed seed, so every run (Redis's and
 *                   scavengerd's) asks for the same names in the same order.
 *   --target pg     libpq async (PQsendQueryPrepared on non-blocking connections):
 *                   nearby: SELECT id, ST_Distance(geog, $1) d FROM pins
 *                           WHERE ST_DWithin(geog, $1, R) ORDER BY d LIMIT L
 *                   insert: INSERT INTO <table> (...) VALUES (...)   (autocommit, one row)
 *                   insert-notify: the same INSERT with a pg_notify of the row in the same
 *                           statement, as scavengerd's POST does
 *   --op map        every request is the next line of --lines FILE (cycled across the connections in
 *                   file order): scav sends the line as it is (e.g. MAP s w n e ZOOM z), its results
 *                   are the cells of the reply (occurrences of "count":); pg runs --sql SQL, prepared,
 *                   with the line's comma-separated fields as its parameters ($1, $2, …), its results
 *                   the rows (issue 55: MAP against PostGIS's grid query on the same boxes).
 *                   A reply counts when it comes inside the measured window, whenever its request
 *                   went out (a low zoom's grid query takes seconds: requests sent in the warm-up
 *                   are most of a short window's). --min-requests N: the window goes on past
 *                   --seconds, half a second at a time, until N replies have counted, for at most
 *                   --max-seconds (default 60) in all; seconds= is then the window measured.
 *   --op ready      (scav) poll until a PING and a NEARBY answer; print seconds since --since.
 *                   --ready-request LINE: that line instead of NEARBY (e.g. RANKING LIMIT 1); an
 *                   ERR UNAVAILABLE reply is polled again, as NEARBY's.
 *
 * Output: one line of key=value pairs on stdout (bench.sh parses it); problems on stderr.
 * SIGINT or SIGTERM ends a run early and cleanly: the line is printed for the window measured so
 * far (seconds= is then that window, and stopped=1), so a run can be sized to some other event
 * (bench.sh: --seconds large, stopped when the expiry sweep exits). --mark FILE creates FILE when
 * the measured window starts (after the connections are up and the warm-up is over).
 * Build: gcc -O2 -o loadgen loadgen.c -I$(pg_config --includedir) -lpq
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum target { T_SCAV, T_REDIS, T_PG };
enum op { OP_NEARBY, OP_POST, OP_PHOTO, OP_INSERT, OP_PING, OP_READY, OP_INSERT_NOTIFY, OP_CHECKIN, OP_LEADERBOARD,
          OP_LEADERBOARD_AROUND, OP_RANKING, OP_RANKING_AROUND, OP_PROFILE, OP_MAP };
static const char *op_names[] = {"nearby", "post", "photo", "insert", "ping", "ready", "insert-notify", "checkin",
                                 "leaderboard", "leaderboard-around", "ranking", "ranking-around", "profile", "map"};

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "loadgen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Histogram: values in ns; index v for v < 64, else 64 sub-buckets per power of two.        */

#define SUB_BITS 6
#define SUB (1u << SUB_BITS)
#define NBUCKETS (SUB + 58 * SUB)

static uint64_t hist[NBUCKETS];
static uint64_t hist_count, hist_max;

static unsigned bucket_of(uint64_t v) {
    if (v < SUB) return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
    unsigned sub = (unsigned)(v >> (e - SUB_BITS)) - SUB;
    unsigned idx = SUB + (e - SUB_BITS) * SUB + sub;
    return idx < NBUCKETS ? idx : NBUCKETS - 1;
}

/* Middle of a bucket's range. */
static double bucket_value(unsigned idx) {
    if (idx < SUB) return idx;
    unsigned e = (idx - SUB) / SUB + SUB_BITS;
    unsigned sub = (idx - SUB) % SUB;
    double lo = (double)((uint64_t)(SUB + sub) << (e - SUB_BITS));
    double width = (double)(1ull << (e - SUB_BITS));
    return lo + width / 2;
}

static void record(uint64_t v) {
    hist[bucket_of(v)]++;
    hist_count++;
    if (v > hist_max) hist_max = v;
}

static double percentile_us(double p) {
    if (hist_count == 0) return 0;
    uint64_t rank = (uint64_t)(p / 100.0 * (double)hist_count + 0.5);
    if (rank < 1) rank = 1;
    if (rank > hist_count) rank = hist_count;
    uint64_t seen = 0;
    for (unsigned i = 0; i < NBUCKETS; i++) {
        seen += hist[i];
        if (seen >= rank) return bucket_value(i) / 1000.0;
    }
    return (double)hist_max / 1000.0;
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */

static enum target target = T_SCAV;
static enum op op = OP_NEARBY;
static const char *host = "127.0.0.1";
static int port = 0;
static const char *pg_conninfo = NULL;
static const char *centres_path = NULL;
static int nconns = 1;
static double seconds = 10, warmup = 1;
static int radius = 1000, limit = 50;
static const char *redis_key = "pins";
static const char *insert_table = "bench_inserts";
static size_t photo_bytes = 1 << 20;
static int photo_variants = 8;
static double since = 0, ready_timeout = 300;
static int watch_pid = 0;
static const char *cpu_pids = "";
static const char *label = "";
/* --keyed PREFIX: POST and CHECKIN lines end with ` REQUEST <PREFIX>-<n>` (n counts up), a key of
 * their own each, as the clients send writes; PREFIX must differ between runs on one database. */
static const char *keyed = NULL;
static unsigned long keys_sent;
static const char *mark_path = NULL;
static const char *walk_path = NULL;
static const char *hunt_id = NULL;
static const char *expect_text = NULL;
#define MAX_SETUP 8
static const char *setup_lines[MAX_SETUP];
static int nsetup;
static const char *setup_values_path = NULL;
static const char *members_path = NULL;
static long users = 0;
static const char *user_prefix = "rk";
static int user_digits = 7;
static const char *hash_prefix = "rkp:";
static const char *ready_request = NULL;
static const char *lines_path = NULL;
static const char *map_sql = NULL;
static long min_requests = 0;
static double max_seconds = 60;
static int extended = 0;
static volatile sig_atomic_t stop_requested = 0;

static void on_stop_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static void usage(void) {
    fprintf(stderr,
            "usage: loadgen --target scav|redis|pg\n"
            "  --op nearby|post|photo|insert|insert-notify|ping|ready|checkin|leaderboard|leaderboard-around|\n"
            "       ranking|ranking-around|profile|map\n"
            "  [--host 127.0.0.1] [--port P] [--pg CONNINFO] [--centres FILE] [--conns N]\n"
            "  [--seconds S] [--warmup S] [--radius M] [--limit N] [--redis-key K]\n"
            "  [--table T] [--photo-bytes B] [--since EPOCH] [--timeout S] [--cpu-pids P,P]\n"
            "  [--label TEXT] [--keyed PREFIX] [--watch-pid PID] [--mark FILE] [--walk FILE] [--hunt ID]\n"
            "  [--setup LINE]... [--setup-values FILE] [--expect TEXT] [--members FILE]\n"
            "  [--users N] [--user-prefix P] [--user-digits D] [--hash-prefix H] [--ready-request LINE]\n"
            "  [--lines FILE] [--sql SQL] [--min-requests N] [--max-seconds S]\n"
            "SIGINT/SIGTERM: stop early and print the figures of the window measured so far.\n");
    exit(2);
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--target")) {
            if (!strcmp(v, "scav")) target = T_SCAV;
            else if (!strcmp(v, "redis")) target = T_REDIS;
            else if (!strcmp(v, "pg")) target = T_PG;
            else usage();
        } else if (!strcmp(a, "--op")) {
            if (!strcmp(v, "nearby")) op = OP_NEARBY;
            else if (!strcmp(v, "post")) op = OP_POST;
            else if (!strcmp(v, "photo")) op = OP_PHOTO;
            else if (!strcmp(v, "insert")) op = OP_INSERT;
            else if (!strcmp(v, "insert-notify")) op = OP_INSERT_NOTIFY;
            else if (!strcmp(v, "ping")) op = OP_PING;
            else if (!strcmp(v, "ready")) op = OP_READY;
            else if (!strcmp(v, "checkin")) op = OP_CHECKIN;
            else if (!strcmp(v, "leaderboard")) op = OP_LEADERBOARD;
            else if (!strcmp(v, "leaderboard-around")) op = OP_LEADERBOARD_AROUND;
            else if (!strcmp(v, "ranking")) op = OP_RANKING;
            else if (!strcmp(v, "ranking-around")) op = OP_RANKING_AROUND;
            else if (!strcmp(v, "profile")) op = OP_PROFILE;
            else if (!strcmp(v, "map")) op = OP_MAP;
            else usage();
        } else if (!strcmp(a, "--host")) host = v;
        else if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--pg")) pg_conninfo = v;
        else if (!strcmp(a, "--centres")) centres_path = v;
        else if (!strcmp(a, "--conns")) nconns = atoi(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--warmup")) warmup = atof(v);
        else if (!strcmp(a, "--radius")) radius = atoi(v);
        else if (!strcmp(a, "--limit")) limit = atoi(v);
        else if (!strcmp(a, "--redis-key")) redis_key = v;
        else if (!strcmp(a, "--table")) insert_table = v;
        else if (!strcmp(a, "--photo-bytes")) photo_bytes = (size_t)atol(v);
        else if (!strcmp(a, "--since")) since = atof(v);
        else if (!strcmp(a, "--timeout")) ready_timeout = atof(v);
        else if (!strcmp(a, "--watch-pid")) watch_pid = atoi(v);
        else if (!strcmp(a, "--cpu-pids")) cpu_pids = v;
        else if (!strcmp(a, "--label")) label = v;
        else if (!strcmp(a, "--keyed")) keyed = v;
        else if (!strcmp(a, "--mark")) mark_path = v;
        else if (!strcmp(a, "--walk")) walk_path = v;
        else if (!strcmp(a, "--hunt")) hunt_id = v;
        else if (!strcmp(a, "--expect")) expect_text = v;
        else if (!strcmp(a, "--setup-values")) setup_values_path = v;
        else if (!strcmp(a, "--members")) members_path = v;
        else if (!strcmp(a, "--users")) users = atol(v);
        else if (!strcmp(a, "--user-prefix")) user_prefix = v;
        else if (!strcmp(a, "--user-digits")) user_digits = atoi(v);
        else if (!strcmp(a, "--hash-prefix")) hash_prefix = v;
        else if (!strcmp(a, "--ready-request")) ready_request = v;
        else if (!strcmp(a, "--lines")) lines_path = v;
        else if (!strcmp(a, "--sql")) map_sql = v;
        else if (!strcmp(a, "--min-requests")) min_requests = atol(v);
        else if (!strcmp(a, "--max-seconds")) max_seconds = atof(v);
        else if (!strcmp(a, "--setup")) {
            if (nsetup == MAX_SETUP) die("at most %d --setup lines", MAX_SETUP);
            setup_lines[nsetup++] = v;
        } else usage();
    }
    if (nconns < 1 || nconns > 4096) die("--conns must be 1..4096");
    if (seconds <= 0 || seconds > 3600) die("--seconds must be in (0, 3600]");
    if (warmup < 0 || warmup > 600) die("--warmup must be in [0, 600]");
    if (target == T_PG && !pg_conninfo) die("--target pg needs --pg CONNINFO");
    if (target != T_PG && port <= 0) die("--port is needed");
    if ((op == OP_CHECKIN || op == OP_LEADERBOARD || op == OP_LEADERBOARD_AROUND) && target != T_SCAV)
        die("--op %s is for --target scav", op_names[op]);
    if (op == OP_CHECKIN && !walk_path) die("--op checkin needs --walk FILE");
    if ((op == OP_LEADERBOARD || op == OP_LEADERBOARD_AROUND) && !hunt_id) die("--op %s needs --hunt ID", op_names[op]);
    if ((nsetup || setup_values_path || expect_text) && target != T_SCAV) die("--setup, --setup-values and --expect are for --target scav");
    if ((op == OP_RANKING || op == OP_RANKING_AROUND || op == OP_PROFILE) && target == T_PG)
        die("--op %s is for --target scav or redis", op_names[op]);
    if (op == OP_RANKING_AROUND && target == T_REDIS && !members_path) die("--op ranking-around needs --members FILE for redis");
    if (op == OP_PROFILE && users < 1) die("--op profile needs --users N");
    if (user_digits < 1 || user_digits > 12 || strlen(user_prefix) > 32) die("bad --user-prefix or --user-digits");
    if (limit < 1 || limit > 10000) die("--limit must be 1..10000");
    if (op == OP_MAP && !lines_path) die("--op map needs --lines FILE");
    if (op == OP_MAP && target == T_REDIS) die("--op map is for --target scav or pg");
    if (op == OP_MAP && target == T_PG && !map_sql) die("--op map --target pg needs --sql SQL");
    if (min_requests && op != OP_MAP) die("--min-requests is for --op map");
}

/* ---------------------------------------------------------------------------------------- */
/* Lines of a file (--walk, --setup-values): without their newline, empty lines skipped.    */

static char **read_lines(const char *path, size_t *count) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    char **lines = NULL, *line = NULL;
    size_t n = 0, cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0) continue;
        lines = xrealloc(lines, (n + 1) * sizeof *lines);
        lines[n++] = strndup(line, (size_t)len);
    }
    free(line);
    fclose(f);
    if (n == 0) die("no lines in %s", path);
    *count = n;
    return lines;
}

static char **walk;
static size_t nwalk;
static char **setup_values;
static size_t nsetup_values;
static char **members;
static size_t nmembers;
/* --op map: the lines of --lines; for pg each split at its commas into the statement's parameters. */
static char **map_lines;
static size_t nmap_lines;
static char ***map_params;
static int map_nparams;

static void split_map_params(void) {
    map_params = xmalloc(nmap_lines * sizeof *map_params);
    for (size_t i = 0; i < nmap_lines; i++) {
        int n = 1;
        for (const char *p = map_lines[i]; *p; p++) n += *p == ',';
        if (i == 0) map_nparams = n;
        else if (n != map_nparams) die("line %zu of --lines has %d fields, the first %d", i + 1, n, map_nparams);
        map_params[i] = xmalloc((size_t)n * sizeof(char *));
        char *copy = strdup(map_lines[i]), *save = NULL;
        int k = 0;
        for (char *t = strtok_r(copy, ",", &save); t && k < n; t = strtok_r(NULL, ",", &save)) map_params[i][k++] = t;
        if (k != n) die("line %zu of --lines has an empty field", i + 1);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Query centres                                                                            */

static double *c_lat, *c_lon;
static size_t ncentres;

static void load_centres(void) {
    if (!centres_path) die("--centres FILE is needed");
    FILE *f = fopen(centres_path, "r");
    if (!f) die("cannot open %s: %s", centres_path, strerror(errno));
    size_t cap = 1024;
    c_lat = xmalloc(cap * sizeof(double));
    c_lon = xmalloc(cap * sizeof(double));
    double la, lo;
    while (fscanf(f, "%lf,%lf", &la, &lo) == 2) {
        if (ncentres == cap) {
            cap *= 2;
            c_lat = xrealloc(c_lat, cap * sizeof(double));
            c_lon = xrealloc(c_lon, cap * sizeof(double));
        }
        c_lat[ncentres] = la;
        c_lon[ncentres] = lo;
        ncentres++;
    }
    fclose(f);
    if (ncentres == 0) die("no centres in %s", centres_path);
}

/* ---------------------------------------------------------------------------------------- */
/* Pre-built requests: formatting is done once, so the loop only copies pointers.           */

struct req {
    char *data;
    size_t len;
};
static struct req *reqs;
static size_t nreqs;

static const char *post_texts[] = {
    "Free coffee at the blue kiosk until 5", "Anyone seen a lost cat around the fountain?",
    "Street art behind the station, go look", "Live jazz in the square tonight",
    "Fresh bread at the corner bakery", "Parking spot free on the old bridge side",
    "Pickup game at the park gate, need 2", "Sunset from the library steps is unreal",
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static char *base64_encode(const unsigned char *in, size_t n, size_t *outlen) {
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t olen = 4 * ((n + 2) / 3);
    char *out = xmalloc(olen + 1), *p = out;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *p++ = tbl[v >> 18];
        *p++ = tbl[(v >> 12) & 63];
        *p++ = tbl[(v >> 6) & 63];
        *p++ = tbl[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
        *p++ = tbl[v >> 18];
        *p++ = tbl[(v >> 12) & 63];
        *p++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        *p++ = '=';
    }
    *p = 0;
    *outlen = (size_t)(p - out);
    return out;
}

static void add_req(char *data, size_t len) {
    reqs = xrealloc(reqs, (nreqs + 1) * sizeof *reqs);
    reqs[nreqs].data = data;
    reqs[nreqs].len = len;
    nreqs++;
}

static void resp_arg(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t sl = strlen(s);
    if (*len + sl + 32 > *cap) {
        *cap = (*len + sl + 32) * 2;
        *buf = xrealloc(*buf, *cap);
    }
    *len += (size_t)sprintf(*buf + *len, "$%zu\r\n%s\r\n", sl, s);
}

static void build_requests(void) {
    char tmp[512];
    if (target == T_SCAV && op == OP_PHOTO) {
        /* A handful of distinct "photos", each a well-formed JPEG the daemon's metadata scrubber
         * accepts: SOI, JFIF, a frame header, one scan of random entropy-coded data (every 0xFF
         * stuffed with 0x00, as JPEG requires), EOI. */
        unsigned char *raw = xmalloc(photo_bytes);
        for (int k = 0; k < photo_variants; k++) {
            for (size_t i = 0; i < photo_bytes; i += 8) {
                uint64_t r = rng_next();
                memcpy(raw + i, &r, photo_bytes - i < 8 ? photo_bytes - i : 8);
            }
            static const unsigned char jpeg[] = {
                0xFF, 0xD8,                                                                         /* SOI */
                0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0,        /* APP0 */
                0xFF, 0xC0, 0x00, 0x0B, 8, 0x00, 0x10, 0x00, 0x10, 1, 1, 0x11, 0,                 /* SOF0 */
                0xFF, 0xDA, 0x00, 0x08, 1, 1, 0x00, 0, 0x3F, 0};                                  /* SOS */
            memcpy(raw, jpeg, sizeof jpeg);
            for (size_t i = sizeof jpeg; i + 2 < photo_bytes; i++)
                if (raw[i] == 0xFF) raw[++i] = 0x00;
            if (raw[photo_bytes - 3] == 0xFF) raw[photo_bytes - 3] = 0xFE;
            raw[photo_bytes - 2] = 0xFF;
            raw[photo_bytes - 1] = 0xD9; /* EOI */
            size_t blen;
            char *b64 = base64_encode(raw, photo_bytes, &blen);
            size_t i = (size_t)k % ncentres;
            int head = snprintf(tmp, sizeof tmp, "POSTPHOTO %.6f %.6f ", c_lat[i], c_lon[i]);
            const char *tail = " CAPTION \"bench photo\"\n";
            size_t len = (size_t)head + blen + strlen(tail);
            char *line = xmalloc(len + 1);
            memcpy(line, tmp, (size_t)head);
            memcpy(line + head, b64, blen);
            memcpy(line + head + blen, tail, strlen(tail) + 1);
            free(b64);
            add_req(line, len);
        }
        free(raw);
        return;
    }
    if (op == OP_MAP) {
        if (target == T_PG) return; /* the parameters of each line, split once (split_map_params) */
        for (size_t i = 0; i < nmap_lines; i++) {
            size_t n = strlen(map_lines[i]);
            char *line = xmalloc(n + 2);
            memcpy(line, map_lines[i], n);
            line[n] = '\n';
            line[n + 1] = 0;
            add_req(line, n + 1);
        }
        return;
    }
    if (target == T_PG) return; /* parameters are formatted per request (cheap) */
    if (op == OP_CHECKIN || op == OP_PROFILE) return; /* formatted per request */
    if (op == OP_RANKING_AROUND && target == T_REDIS) return; /* per connection (its member) */
    if (op == OP_RANKING || op == OP_RANKING_AROUND) {
        char *buf;
        size_t len = 0, cap = 256;
        if (target == T_SCAV) {
            int n = op == OP_RANKING ? snprintf(tmp, sizeof tmp, "RANKING LIMIT %d\n", limit)
                                     : snprintf(tmp, sizeof tmp, "RANKING AROUND LIMIT %d\n", limit);
            add_req(strndup(tmp, (size_t)n), (size_t)n);
            return;
        }
        char stop[16];
        snprintf(stop, sizeof stop, "%d", limit - 1);
        buf = xmalloc(cap);
        len = (size_t)sprintf(buf, "*5\r\n");
        const char *args[] = {"ZREVRANGE", redis_key, "0", stop, "WITHSCORES"};
        for (size_t k = 0; k < 5; k++) resp_arg(&buf, &len, &cap, args[k]);
        add_req(buf, len);
        return;
    }
    if (op == OP_LEADERBOARD || op == OP_LEADERBOARD_AROUND) {
        int n = op == OP_LEADERBOARD ? snprintf(tmp, sizeof tmp, "LEADERBOARD %s LIMIT %d\n", hunt_id, limit)
                                     : snprintf(tmp, sizeof tmp, "LEADERBOARD %s AROUND\n", hunt_id);
        if (n < 0 || (size_t)n >= sizeof tmp) die("--hunt is too long");
        add_req(strndup(tmp, (size_t)n), (size_t)n);
        return;
    }
    for (size_t i = 0; i < ncentres; i++) {
        int n = 0;
        if (target == T_SCAV) {
            if (op == OP_NEARBY)
                n = snprintf(tmp, sizeof tmp, "NEARBY %.6f %.6f %d LIMIT %d\n", c_lat[i], c_lon[i], radius, limit);
            else if (op == OP_POST)
                n = snprintf(tmp, sizeof tmp, "POST %.6f %.6f \"%s #%zu\"\n", c_lat[i], c_lon[i],
                             post_texts[i % (sizeof post_texts / sizeof *post_texts)], i);
            else if (op == OP_PING)
                n = snprintf(tmp, sizeof tmp, "PING\n");
            else
                die("--op not supported for scav");
            add_req(strndup(tmp, (size_t)n), (size_t)n);
        } else { /* redis */
            char *buf = NULL;
            size_t len = 0, cap = 0;
            char slon[32], slat[32], srad[16], slim[16];
            snprintf(slon, sizeof slon, "%.6f", c_lon[i]);
            snprintf(slat, sizeof slat, "%.6f", c_lat[i]);
            snprintf(srad, sizeof srad, "%d", radius);
            snprintf(slim, sizeof slim, "%d", limit);
            if (op == OP_NEARBY) {
                const char *args[] = {"GEOSEARCH", redis_key, "FROMLONLAT", slon, slat, "BYRADIUS", srad,
                                      "m", "ASC", "COUNT", slim, "WITHDIST"};
                cap = 256;
                buf = xmalloc(cap);
                len = (size_t)sprintf(buf, "*%zu\r\n", sizeof args / sizeof *args);
                for (size_t k = 0; k < sizeof args / sizeof *args; k++) resp_arg(&buf, &len, &cap, args[k]);
            } else if (op == OP_PING) {
                buf = strdup("*1\r\n$4\r\nPING\r\n");
                len = strlen(buf);
            } else {
                die("--op not supported for redis");
            }
            add_req(buf, len);
        }
    }
}

/* Profile names: a generator of their own, seeded the same in every run, so Redis's runs and
 * scavengerd's ask for the same users in the same order. */
static uint64_t name_rng_state = 0x2545f4914f6cdd1dull;
static long next_user(void) {
    name_rng_state ^= name_rng_state >> 12;
    name_rng_state ^= name_rng_state << 25;
    name_rng_state ^= name_rng_state >> 27;
    return 1 + (long)((name_rng_state * 0x2545f4914f6cdd1dull >> 11) % (uint64_t)users);
}

/* Writes one RESP command of argc arguments into buf (cap bytes); returns its length. */
static size_t resp_command(char *buf, size_t cap, int argc, const char **argv) {
    size_t len = (size_t)snprintf(buf, cap, "*%d\r\n", argc);
    for (int k = 0; k < argc && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "$%zu\r\n%s\r\n", strlen(argv[k]), argv[k]);
    if (len >= cap) die("a command is too long");
    return len;
}

/* ---------------------------------------------------------------------------------------- */
/* Reply parsing                                                                            */

/* RESP: returns bytes of one complete value at buf[0..len), 0 if incomplete, -1 if malformed.
 * *elements: top-level array length (or -1 for nil); *is_err for '-' replies. */
static long resp_value(const char *buf, size_t len, long *elements, int *is_err, int depth) {
    if (len < 1) return 0;
    const char *eol = memchr(buf, '\n', len);
    if (!eol) return 0;
    size_t line = (size_t)(eol - buf) + 1;
    char t = buf[0];
    if (t == '+' || t == ':' || t == ',' || t == '_' || t == '#') return (long)line;
    if (t == '-') {
        if (is_err) *is_err = 1;
        return (long)line;
    }
    long n = strtol(buf + 1, NULL, 10);
    if (t == '$') {
        if (n < 0) return (long)line;
        if (len < line + (size_t)n + 2) return 0;
        return (long)(line + (size_t)n + 2);
    }
    if (t == '*' || t == '%') {
        if (depth == 0 && elements) *elements = n;
        if (n < 0) return (long)line;
        size_t count = t == '%' ? (size_t)n * 2 : (size_t)n, off = line;
        for (size_t k = 0; k < count; k++) {
            long used = resp_value(buf + off, len - off, NULL, NULL, depth + 1);
            if (used <= 0) return used;
            off += (size_t)used;
        }
        return (long)off;
    }
    return -1;
}

/* Occurrences of needle in s[0..n). */
static long count_of(const char *s, size_t n, const char *needle) {
    size_t nl = strlen(needle);
    long c = 0;
    const char *p = s, *end = s + n;
    while ((p = memmem(p, (size_t)(end - p), needle, nl))) {
        c++;
        p += nl;
    }
    return c;
}

/* Pins in a NEARBY reply: occurrences of "distance_m". */
static long count_distance(const char *s, size_t n) { return count_of(s, n, "\"distance_m\""); }

/* Entries in a LEADERBOARD reply: occurrences of "rank". */
static long count_entries(const char *s, size_t n) { return count_of(s, n, "\"rank\":"); }

/* ---------------------------------------------------------------------------------------- */
/* CPU of the servers: utime+stime of each PID and of its direct children                   */

static long clk_tck;

static double proc_cpu(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    /* fields after ')': state ppid ... utime is field 14, stime 15 (1-based overall) */
    unsigned long utime = 0, stime = 0;
    int field = 2;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 14) utime = strtoul(tok, NULL, 10);
        if (field == 15) {
            stime = strtoul(tok, NULL, 10);
            break;
        }
    }
    return (double)(utime + stime) / (double)clk_tck;
}

static int proc_ppid(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    char state;
    int ppid;
    if (sscanf(p + 1, " %c %d", &state, &ppid) != 2) return -1;
    return ppid;
}

/* Sum over the listed PIDs and their children. Children that exited inside the window are
 * missed (backends live as long as their connection, so that is fine here). */
static double servers_cpu(void) {
    if (!*cpu_pids) return 0;
    int pids[16], np = 0;
    char *copy = strdup(cpu_pids);
    for (char *t = strtok(copy, ","); t && np < 16; t = strtok(NULL, ",")) pids[np++] = atoi(t);
    free(copy);
    double total = 0;
    for (int i = 0; i < np; i++) total += proc_cpu(pids[i]);
    DIR *d = opendir("/proc");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!isdigit((unsigned char)e->d_name[0])) continue;
            int pid = atoi(e->d_name), pp = proc_ppid(pid);
            for (int i = 0; i < np; i++)
                if (pp == pids[i]) total += proc_cpu(pid);
        }
        closedir(d);
    }
    return total;
}

static double self_cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* ---------------------------------------------------------------------------------------- */
/* Connections                                                                              */

struct conn {
    int fd;
    PGconn *pg;
    const char *out; /* the request being written */
    size_t outlen, outoff;
    char *in;
    size_t inlen, incap, scan;
    uint64_t t0;
    int writing;
    int busy;
    long pg_rows;
    int pg_err;
    char pg_errmsg[200];
    size_t walk_start, walked; /* checkin: the first line of --walk, lines used so far */
    char line[512];            /* checkin, profile, ranking-around: the request being written */
    int stage;                 /* redis ranking-around: 0 waiting for ZREVRANK, 1 for ZREVRANGE */
    int replies_left;          /* redis profile: replies still to come for this request */
    int bad;                   /* redis profile: an earlier reply of this request was wrong */
    char *member_req;          /* redis ranking-around: this connection's ZREVRANK */
    size_t member_req_len;
    const char *member;
};

static struct conn *conns;
static int epfd;
static size_t next_req;
static uint64_t warm_end, run_end;
static uint64_t done_requests, errors, results_total, bytes_in;
static char first_error[256];
static uint64_t warmup_errors;
static Oid geography_oid;

static int tcp_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) die("bad --host %s (an IPv4 address)", host);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Blocking: send a line, read one reply line into buf. Returns 0 on success. */
static int line_roundtrip(int fd, const char *line, char *buf, size_t cap) {
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t w = write(fd, line + off, len - off);
        if (w <= 0) return -1;
        off += (size_t)w;
    }
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t r = read(fd, buf + got, 1);
        if (r <= 0) return -1;
        if (buf[got] == '\n') {
            buf[got] = 0;
            return 0;
        }
        got++;
    }
    buf[cap - 1] = 0;
    return -1;
}

static void set_nonblocking(int fd) {
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void ep_mod(struct conn *c, int want_write) {
    struct epoll_event ev = {.events = EPOLLIN | (want_write ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl: %s", strerror(errno));
    c->writing = want_write;
}

static void note_error(const char *msg, size_t n, int count) {
    if (count) errors++;
    else warmup_errors++;
    if (!first_error[0]) {
        if (n > sizeof first_error - 1) n = sizeof first_error - 1;
        memcpy(first_error, msg, n);
        first_error[n] = 0;
        for (char *p = first_error; *p; p++)
            if (*p == '\r' || *p == '\n') *p = ' ';
    }
}

/* Sends one --setup line on connection i (placeholders filled in); it must answer OK. */
static void setup_line(int fd, int i, const char *tmpl) {
    char line[1024], reply[4096], num[16];
    size_t len = 0;
    snprintf(num, sizeof num, "%d", i);
    for (const char *p = tmpl; *p;) {
        const char *add = NULL;
        if (!strncmp(p, "{conn}", 6)) {
            add = num;
            p += 6;
        } else if (!strncmp(p, "{value}", 7)) {
            if (!setup_values) die("--setup uses {value}: --setup-values FILE is needed");
            if ((size_t)i >= nsetup_values)
                die("--setup-values has %zu lines for %d connections", nsetup_values, nconns);
            add = setup_values[i];
            p += 7;
        }
        size_t alen = add ? strlen(add) : 1;
        if (len + alen + 2 > sizeof line) die("a --setup line is too long");
        if (add) memcpy(line + len, add, alen);
        else line[len] = *p++;
        len += alen;
    }
    line[len++] = '\n';
    line[len] = 0;
    if (line_roundtrip(fd, line, reply, sizeof reply) != 0) die("--setup on connection %d: no reply", i);
    if (strncmp(reply, "OK", 2) != 0) die("--setup on connection %d: %.*s: %s", i, (int)len - 1, line, reply);
}

static void setup_connections(void) {
    conns = calloc((size_t)nconns, sizeof *conns);
    if (!conns) die("out of memory");
    epfd = epoll_create1(0);
    /* Unique per run: the time and the pid side by side (their XOR could repeat). */
    unsigned long stamp = (unsigned long)time(NULL) & 0xffffffffUL;
    unsigned pid = (unsigned)getpid() & 0xffffffu;
    for (int i = 0; i < nconns; i++) {
        struct conn *c = &conns[i];
        if (target == T_PG) {
            c->pg = PQconnectdb(pg_conninfo);
            if (PQstatus(c->pg) != CONNECTION_OK) die("PostgreSQL: %s", PQerrorMessage(c->pg));
            if (i == 0) {
                PGresult *r = PQexec(c->pg, "SELECT 'geography'::regtype::oid");
                if (op == OP_NEARBY) {
                    if (PQresultStatus(r) != PGRES_TUPLES_OK) die("no geography type: %s", PQerrorMessage(c->pg));
                    geography_oid = (Oid)strtoul(PQgetvalue(r, 0, 0), NULL, 10);
                }
                PQclear(r);
            }
            char sql[512];
            PGresult *r;
            if (op == OP_NEARBY) {
                snprintf(sql, sizeof sql,
                         "SELECT id, ST_Distance(geog, $1) d FROM pins WHERE ST_DWithin(geog, $1, %d) "
                         "ORDER BY d LIMIT %d",
                         radius, limit);
                r = PQprepare(c->pg, "q", sql, 1, &geography_oid);
            } else if (op == OP_INSERT) {
                snprintf(sql, sizeof sql,
                         "INSERT INTO %s (id, author_id, lat, lon, kind, body, expires_at, cell) "
                         "VALUES ($1, $2, $3, $4, 'text', $5, now() + interval '48 hours', $6)",
                         insert_table);
                r = PQprepare(c->pg, "q", sql, 6, NULL);
            } else if (op == OP_INSERT_NOTIFY) {
                /* The daemon's shape: the row and a NOTIFY of it in one statement. */
                snprintf(sql, sizeof sql,
                         "WITH i AS (INSERT INTO %s (id, author_id, lat, lon, kind, body, expires_at, cell) "
                         "VALUES ($1, $2, $3, $4, 'text', $5, now() + interval '48 hours', $6) RETURNING id) "
                         "SELECT pg_notify('bench_inserts', id) FROM i",
                         insert_table);
                r = PQprepare(c->pg, "q", sql, 6, NULL);
            } else if (op == OP_PING) {
                r = PQprepare(c->pg, "q", "SELECT 1", 0, NULL);
            } else if (op == OP_MAP) {
                r = PQprepare(c->pg, "q", map_sql, map_nparams, NULL);
            } else {
                die("--op not supported for pg");
            }
            if (PQresultStatus(r) != PGRES_COMMAND_OK) die("PREPARE: %s", PQerrorMessage(c->pg));
            PQclear(r);
            if (PQsetnonblocking(c->pg, 1) != 0) die("PQsetnonblocking failed");
            c->fd = PQsocket(c->pg);
        } else {
            c->fd = tcp_connect();
            if (c->fd < 0) die("connect %s:%d: %s", host, port, strerror(errno));
            if (target == T_SCAV && (op == OP_POST || op == OP_PHOTO)) {
                char line[256], reply[4096];
                snprintf(line, sizeof line, "REGISTER lg%08lx%06x_%d lg%08lx%06x_%d@bench.invalid bench-pass-%d\n", stamp, pid,
                         i, stamp, pid, i, i + 1000);
                if (line_roundtrip(c->fd, line, reply, sizeof reply) != 0 || strncmp(reply, "OK", 2) != 0)
                    die("REGISTER on connection %d: %s", i, reply);
            }
            for (int k = 0; k < nsetup; k++) setup_line(c->fd, i, setup_lines[k]);
            if (op == OP_CHECKIN) c->walk_start = (size_t)i * nwalk / (size_t)nconns;
            if (op == OP_RANKING_AROUND && target == T_REDIS) {
                if ((size_t)i >= nmembers) die("--members has %zu lines for %d connections", nmembers, nconns);
                const char *args[] = {"ZREVRANK", redis_key, members[i]};
                char buf[512];
                c->member = members[i];
                c->member_req_len = resp_command(buf, sizeof buf, 3, args);
                c->member_req = strndup(buf, c->member_req_len);
            }
            set_nonblocking(c->fd);
        }
        c->incap = 64 * 1024;
        c->in = xmalloc(c->incap);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl: %s", strerror(errno));
    }
}

static const char *b32 = "abcdefghijklmnopqrstuvwxyz234567";

static void pg_send(struct conn *c) {
    size_t i = next_req++ % (op == OP_MAP ? nmap_lines : ncentres);
    int ok;
    if (op == OP_MAP) {
        ok = PQsendQueryPrepared(c->pg, "q", map_nparams, (const char *const *)map_params[i], NULL, NULL, 0);
    } else if (op == OP_NEARBY) {
        char p1[96];
        snprintf(p1, sizeof p1, "SRID=4326;POINT(%.6f %.6f)", c_lon[i], c_lat[i]);
        const char *vals[1] = {p1};
        ok = PQsendQueryPrepared(c->pg, "q", 1, vals, NULL, NULL, 0);
    } else if (op == OP_INSERT || op == OP_INSERT_NOTIFY) {
        char id[26], author[16], lat[32], lon[32], body[128], cell[24];
        id[0] = 'p';
        uint64_t a = rng_next(), b = rng_next();
        for (int k = 0; k < 12; k++) id[1 + k] = b32[(a >> (5 * k)) & 31];
        for (int k = 0; k < 12; k++) id[13 + k] = b32[(b >> (5 * k)) & 31];
        id[25] = 0;
        snprintf(author, sizeof author, "%d", 1 + (int)(i % 100));
        snprintf(lat, sizeof lat, "%.6f", c_lat[i]);
        snprintf(lon, sizeof lon, "%.6f", c_lon[i]);
        snprintf(body, sizeof body, "%s #%zu", post_texts[i % (sizeof post_texts / sizeof *post_texts)], i);
        snprintf(cell, sizeof cell, "%llu", (unsigned long long)(rng_next() >> 20));
        const char *vals[6] = {id, author, lat, lon, body, cell};
        ok = PQsendQueryPrepared(c->pg, "q", 6, vals, NULL, NULL, 0);
    } else {
        ok = PQsendQueryPrepared(c->pg, "q", 0, NULL, NULL, NULL, 0);
    }
    if (!ok) die("PQsendQueryPrepared: %s", PQerrorMessage(c->pg));
    c->t0 = now_ns();
    c->busy = 1;
    int f = PQflush(c->pg);
    if (f < 0) die("PQflush: %s", PQerrorMessage(c->pg));
    if (f == 1 && !c->writing) ep_mod(c, 1);
    else if (f == 0 && c->writing) ep_mod(c, 0);
}

static void sock_flush(struct conn *c) {
    while (c->outoff < c->outlen) {
        ssize_t w = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!c->writing) ep_mod(c, 1);
                return;
            }
            if (errno == EINTR) continue;
            die("write: %s", strerror(errno));
        }
        c->outoff += (size_t)w;
    }
    if (c->writing) ep_mod(c, 0);
}

static void send_next(struct conn *c) {
    if (target == T_PG) {
        pg_send(c);
        return;
    }
    if (op == OP_CHECKIN) {
        if (c->walked == nwalk)
            die("connection %d has used all %zu lines of --walk: the run needs more stops", (int)(c - conns), nwalk);
        const char *stop = walk[(c->walk_start + c->walked++) % nwalk];
        int n = keyed ? snprintf(c->line, sizeof c->line, "CHECKIN %s REQUEST %s-%lx\n", stop, keyed, keys_sent++)
                      : snprintf(c->line, sizeof c->line, "CHECKIN %s\n", stop);
        if (n < 0 || (size_t)n >= sizeof c->line) die("a line of --walk is too long");
        c->out = c->line;
        c->outlen = (size_t)n;
    } else if (op == OP_PROFILE) {
        char name[64];
        snprintf(name, sizeof name, "%s%0*ld", user_prefix, user_digits, next_user());
        if (target == T_SCAV) {
            c->outlen = (size_t)snprintf(c->line, sizeof c->line, "PROFILE %s\n", name);
        } else {
            char key[128];
            snprintf(key, sizeof key, "%s%s", hash_prefix, name);
            const char *hget[] = {"HGETALL", key}, *zrank[] = {"ZREVRANK", redis_key, name};
            size_t n = resp_command(c->line, sizeof c->line, 2, hget);
            c->outlen = n + resp_command(c->line + n, sizeof c->line - n, 3, zrank);
            c->replies_left = 2;
            c->bad = 0;
        }
        c->out = c->line;
    } else if (op == OP_RANKING_AROUND && target == T_REDIS) {
        c->out = c->member_req;
        c->outlen = c->member_req_len;
        c->stage = 0;
    } else {
        struct req *r = &reqs[next_req++ % nreqs];
        c->out = r->data;
        c->outlen = r->len;
        if (keyed && op == OP_POST) {
            int n = snprintf(c->line, sizeof c->line, "%.*s REQUEST %s-%lx\n", (int)r->len - 1, r->data, keyed, keys_sent++);
            if (n < 0 || (size_t)n >= sizeof c->line) die("a keyed POST line is too long");
            c->out = c->line;
            c->outlen = (size_t)n;
        }
    }
    c->outoff = 0;
    c->t0 = now_ns();
    c->busy = 1;
    sock_flush(c);
}

/* --min-requests: past the window's end with too few replies counted, it goes on half a second
 * (up to --max-seconds in all). Returns whether the run goes on at time t. */
static int run_goes_on(uint64_t t) {
    if (t < run_end) return 1;
    if (done_requests >= (uint64_t)min_requests || t >= warm_end + (uint64_t)(max_seconds * 1e9)) return 0;
    run_end = t + 500000000ull;
    extended = 1;
    return 1;
}

static void completed(struct conn *c, long results, int is_err, const char *err, size_t errlen) {
    uint64_t t = now_ns();
    c->busy = 0;
    if (op == OP_MAP && t >= run_end) run_goes_on(t);
    if ((c->t0 >= warm_end || (op == OP_MAP && t >= warm_end)) && t <= run_end) {
        record(t - c->t0);
        done_requests++;
        if (results > 0) results_total += (uint64_t)results;
        if (is_err) note_error(err, errlen, 1);
    } else if (is_err) {
        note_error(err, errlen, 0); /* an error in the warm-up is still worth showing */
    }
    if (t < run_end) send_next(c);
}

static void on_readable_sock(struct conn *c) {
    for (;;) {
        if (c->incap - c->inlen < 4096) {
            c->incap *= 2;
            c->in = xrealloc(c->in, c->incap);
        }
        size_t space = c->incap - c->inlen;
        ssize_t r = read(c->fd, c->in + c->inlen, space);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            die("read: %s", strerror(errno));
        }
        if (r == 0) die("the server closed a connection%s%s", first_error[0] ? "; first error: " : "", first_error);
        c->inlen += (size_t)r;
        bytes_in += (uint64_t)r;
        if ((size_t)r < space) break; /* a short read: the socket is drained */
    }
    for (;;) {
        size_t used;
        long results = 0;
        int is_err = 0;
        char errbuf[200];
        size_t errlen = 0;
        if (target == T_SCAV) {
            char *nl = memchr(c->in + c->scan, '\n', c->inlen - c->scan);
            if (!nl) {
                c->scan = c->inlen;
                return;
            }
            used = (size_t)(nl - c->in) + 1;
            c->scan = 0;
            if (used >= 6 && memcmp(c->in, "EVENT ", 6) == 0) { /* not ours: skip */
                memmove(c->in, c->in + used, c->inlen - used);
                c->inlen -= used;
                continue;
            }
            is_err = !(used >= 3 && memcmp(c->in, "OK ", 3) == 0);
            if (!is_err && expect_text && !memmem(c->in, used, expect_text, strlen(expect_text))) is_err = 1;
            if (is_err) {
                errlen = used < sizeof errbuf ? used : sizeof errbuf;
                memcpy(errbuf, c->in, errlen);
            } else if (op == OP_NEARBY) {
                results = count_distance(c->in, used);
            } else if (op == OP_MAP) {
                results = count_of(c->in, used, "\"count\":");
            } else if (op == OP_LEADERBOARD || op == OP_LEADERBOARD_AROUND || op == OP_RANKING ||
                       op == OP_RANKING_AROUND) {
                results = count_entries(c->in, used);
            } else if (op == OP_PROFILE) {
                /* Every name asked for is ranked: a null rank is an error. */
                results = 1;
                if (memmem(c->in, used, "\"rank\":null", 11)) {
                    is_err = 1;
                    errlen = used < sizeof errbuf ? used : sizeof errbuf;
                    memcpy(errbuf, c->in, errlen);
                }
            }
        } else {
            long elements = 0;
            long n = resp_value(c->in, c->inlen, &elements, &is_err, 0);
            if (n == 0) return;
            if (n < 0) die("malformed RESP reply");
            used = (size_t)n;
            if (!c->busy) die("a reply to no request");
            if (op == OP_RANKING_AROUND && c->stage == 0 && !is_err && c->in[0] == ':') {
                /* The member's rank: ask for its page, in the same request's time. */
                long rank = strtol(c->in + 1, NULL, 10), from = rank - limit / 2;
                char sfrom[24], sto[24];
                if (from < 0) from = 0;
                snprintf(sfrom, sizeof sfrom, "%ld", from);
                snprintf(sto, sizeof sto, "%ld", from + limit - 1);
                const char *args[] = {"ZREVRANGE", redis_key, sfrom, sto, "WITHSCORES"};
                memmove(c->in, c->in + used, c->inlen - used);
                c->inlen -= used;
                c->outlen = resp_command(c->line, sizeof c->line, 5, args);
                c->out = c->line;
                c->outoff = 0;
                c->stage = 1;
                sock_flush(c);
                continue;
            }
            if (op == OP_RANKING_AROUND && c->stage == 0 && !is_err) {
                is_err = 1; /* a nil rank: the member is not in the set */
                snprintf(errbuf, sizeof errbuf, "ZREVRANK %s: not a member", c->member);
                errlen = strlen(errbuf);
            } else if (op == OP_PROFILE && !is_err &&
                       (c->replies_left == 2 ? elements <= 0 : c->in[0] != ':')) {
                is_err = 1; /* an empty hash or a nil rank: no such user */
                snprintf(errbuf, sizeof errbuf, "%s: no such user", c->replies_left == 2 ? "HGETALL" : "ZREVRANK");
                errlen = strlen(errbuf);
            } else if (is_err) {
                errlen = used < sizeof errbuf ? used : sizeof errbuf;
                memcpy(errbuf, c->in, errlen);
            }
            if (op == OP_PROFILE && --c->replies_left > 0) {
                /* HGETALL's reply: ZREVRANK's is still to come; a failure is kept for the request. */
                if (is_err && !c->bad) {
                    c->bad = 1;
                    snprintf(c->pg_errmsg, sizeof c->pg_errmsg, "%.*s", (int)errlen, errbuf);
                }
                memmove(c->in, c->in + used, c->inlen - used);
                c->inlen -= used;
                continue;
            }
            if (op == OP_PROFILE && c->bad && !is_err) {
                is_err = 1;
                errlen = strlen(c->pg_errmsg);
                memcpy(errbuf, c->pg_errmsg, errlen);
            }
            if (op == OP_NEARBY) results = elements;
            else if (op == OP_RANKING || op == OP_RANKING_AROUND) results = elements > 0 ? elements / 2 : 0;
            else if (op == OP_PROFILE) results = 1;
        }
        memmove(c->in, c->in + used, c->inlen - used);
        c->inlen -= used;
        if (!c->busy) die("a reply to no request");
        completed(c, results, is_err, errbuf, errlen);
        if (c->inlen == 0) return;
    }
}

static void on_readable_pg(struct conn *c) {
    if (!PQconsumeInput(c->pg)) die("PQconsumeInput: %s", PQerrorMessage(c->pg));
    /* A statement's results may arrive over several wake-ups: they add up in the connection. */
    while (c->busy && !PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        if (!r) {
            long results = c->pg_rows;
            int is_err = c->pg_err;
            c->pg_rows = 0;
            c->pg_err = 0;
            completed(c, results, is_err, c->pg_errmsg, strlen(c->pg_errmsg));
            return;
        }
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_TUPLES_OK) c->pg_rows += PQntuples(r);
        else if (st != PGRES_COMMAND_OK) {
            c->pg_err = 1;
            snprintf(c->pg_errmsg, sizeof c->pg_errmsg, "%s", PQresultErrorMessage(r));
        }
        PQclear(r);
    }
}

/* ---------------------------------------------------------------------------------------- */

static int run_ready(void) {
    /* Poll (bounded by --timeout) until PING and NEARBY both answer OK. */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    double start = since > 0 ? since : (double)tv.tv_sec + tv.tv_usec / 1e6;
    double deadline = (double)tv.tv_sec + tv.tv_usec / 1e6 + ready_timeout;
    char reply[1 << 16], line[256];
    double ping_at = 0;
    for (;;) {
        gettimeofday(&tv, NULL);
        double t = (double)tv.tv_sec + tv.tv_usec / 1e6;
        if (t > deadline) die("not serving after %.0f s", ready_timeout);
        if (watch_pid > 0 && kill(watch_pid, 0) != 0) die("the server (pid %d) exited", watch_pid);
        int fd = tcp_connect();
        if (fd < 0) {
            usleep(5000);
            continue;
        }
        /* Nothing listening and the port in the ephemeral range: the kernel may have connected
         * the socket to itself (simultaneous open). Let go of it at once. */
        struct sockaddr_in me, peer;
        socklen_t ml = sizeof me, pl = sizeof peer;
        if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0 && getpeername(fd, (struct sockaddr *)&peer, &pl) == 0 &&
            me.sin_port == peer.sin_port && me.sin_addr.s_addr == peer.sin_addr.s_addr) {
            close(fd);
            usleep(5000);
            continue;
        }
        struct timeval rt = {.tv_sec = 30};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof rt);
        if (line_roundtrip(fd, "PING\n", reply, sizeof reply) == 0 && strcmp(reply, "OK \"PONG\"") == 0) {
            /* The first PING answered: the daemon serves while its feed loads. */
            if (ping_at == 0) {
                gettimeofday(&tv, NULL);
                ping_at = (double)tv.tv_sec + tv.tv_usec / 1e6;
            }
            if (ready_request) snprintf(line, sizeof line, "%s\n", ready_request);
            else snprintf(line, sizeof line, "NEARBY %.6f %.6f %d LIMIT %d\n", c_lat[0], c_lon[0], radius, limit);
            int answered = line_roundtrip(fd, line, reply, sizeof reply) == 0;
            /* The daemon serves at once and loads its feed meanwhile: until then, UNAVAILABLE. */
            if (answered && strncmp(reply, "ERR UNAVAILABLE", 15) == 0) {
                close(fd);
                usleep(5000);
                continue;
            }
            if (answered && strncmp(reply, "OK ", 3) == 0) {
                gettimeofday(&tv, NULL);
                double done = (double)tv.tv_sec + tv.tv_usec / 1e6;
                if (ready_request)
                    printf("ready_s=%.3f ping_s=%.3f first_entries=%ld\n", done - start, ping_at - start,
                           count_entries(reply, strlen(reply)));
                else
                    printf("ready_s=%.3f ping_s=%.3f first_nearby_results=%ld\n", done - start, ping_at - start,
                           count_distance(reply, strlen(reply)));
                close(fd);
                return 0;
            }
            die("%s did not work: %s", ready_request ? ready_request : "NEARBY", reply);
        }
        close(fd);
        usleep(5000);
    }
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    clk_tck = sysconf(_SC_CLK_TCK);
    parse_args(argc, argv);
    load_centres();
    if (op == OP_READY) return run_ready();
    if (walk_path) walk = read_lines(walk_path, &nwalk);
    if (setup_values_path) setup_values = read_lines(setup_values_path, &nsetup_values);
    if (members_path) members = read_lines(members_path, &nmembers);
    if (lines_path) map_lines = read_lines(lines_path, &nmap_lines);
    if (op == OP_MAP && target == T_PG) split_map_params();
    /* No SA_RESTART: epoll_wait returns EINTR at once and the loop sees the flag. */
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* Ids for INSERT must differ from every earlier run's: seed from the clock and the pid.
     * (Requests themselves are the same sequence every run: centres in file order.) */
    rng_state ^= (uint64_t)now_ns() * 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 32);
    if (!rng_state) rng_state = 1;
    build_requests();
    setup_connections();

    struct epoll_event evs[256];
    uint64_t start = now_ns();
    warm_end = start + (uint64_t)(warmup * 1e9);
    run_end = warm_end + (uint64_t)(seconds * 1e9);
    for (int i = 0; i < nconns; i++) send_next(&conns[i]);
    int measuring = 0;
    double cpu0 = 0, srv0 = 0, cpu1, srv1;
    uint64_t t_meas0 = warm_end, t_stop = 0;
    if (warmup == 0) {
        measuring = 1;
        cpu0 = self_cpu();
        srv0 = servers_cpu();
        if (mark_path) close(open(mark_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    }
    for (;;) {
        uint64_t t = now_ns();
        if (!measuring && t >= warm_end && !stop_requested) {
            measuring = 1;
            cpu0 = self_cpu();
            srv0 = servers_cpu();
            t_meas0 = t;
            if (mark_path) close(open(mark_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        }
        if (stop_requested) {
            t_stop = t;
            break;
        }
        if (!run_goes_on(t)) break;
        uint64_t until = measuring ? run_end : warm_end;
        int timeout_ms = (int)((until - t) / 1000000) + 1;
        if (timeout_ms > 100) timeout_ms = 100;
        int n = epoll_wait(epfd, evs, 256, timeout_ms);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait: %s", strerror(errno));
        }
        for (int k = 0; k < n; k++) {
            struct conn *c = evs[k].data.ptr;
            if (target == T_PG) {
                if (evs[k].events & EPOLLOUT) {
                    int f = PQflush(c->pg);
                    if (f < 0) die("PQflush: %s", PQerrorMessage(c->pg));
                    if (f == 0) ep_mod(c, 0);
                }
                if (evs[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable_pg(c);
            } else {
                if (evs[k].events & EPOLLOUT) sock_flush(c);
                if (evs[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable_sock(c);
            }
        }
    }
    cpu1 = self_cpu();
    srv1 = servers_cpu();
    double window = (double)(now_ns() - t_meas0) / 1e9;
    if (window < seconds) window = seconds;
    if (extended && !t_stop) seconds = (double)(run_end - warm_end) / 1e9;
    if (t_stop) { /* stopped by a signal: the figures are for the window measured until then */
        seconds = measuring && t_stop > t_meas0 ? (double)(t_stop - t_meas0) / 1e9 : 0;
        window = seconds;
        if (!measuring) {
            cpu0 = cpu1;
            srv0 = srv1;
            fprintf(stderr, "loadgen: stopped during the warm-up: nothing measured\n");
        }
    }
    double cpu = cpu1 - cpu0;
    const char *tname = target == T_SCAV ? "scav" : target == T_REDIS ? "redis" : "pg";
    printf("label=%s target=%s op=%s conns=%d seconds=%.2f requests=%llu rps=%.1f p50_us=%.1f p90_us=%.1f "
           "p99_us=%.1f p999_us=%.1f max_us=%.1f errors=%llu mean_results=%.2f bytes_in=%llu client_cpu_s=%.3f "
           "client_cpu_pct=%.1f server_cpu_s=%.3f server_cpu_pct=%.1f mib_s=%.2f%s\n",
           label[0] ? label : "-", tname, op_names[op], nconns, seconds, (unsigned long long)done_requests,
           seconds > 0 ? (double)done_requests / seconds : 0.0, percentile_us(50), percentile_us(90), percentile_us(99),
           percentile_us(99.9), (double)hist_max / 1000.0, (unsigned long long)errors,
           done_requests ? (double)results_total / (double)done_requests : 0.0, (unsigned long long)bytes_in, cpu,
           window > 0 ? 100.0 * cpu / window : 0.0, srv1 - srv0, window > 0 ? 100.0 * (srv1 - srv0) / window : 0.0,
           op == OP_PHOTO && seconds > 0 ? (double)done_requests * (double)photo_bytes / 1048576.0 / seconds : 0.0,
           t_stop ? " stopped=1" : "");
    if (errors || warmup_errors)
        fprintf(stderr, "loadgen: %llu errors (+%llu in the warm-up); first: %s\n", (unsigned long long)errors,
                (unsigned long long)warmup_errors, first_error);
    fflush(stdout);
    return 0;
}
