/* C tests of route sets and live tables: a route set built from a table file one route at a
 * time (text and binary prefixes) against the same file loaded whole, and copied out
 * (ipfib_table_routes) into another set answering the same; tables built from it and
 * a live table fed by batches, single changes and removals, each answering as the reference
 * (the expected answers of `ipfib lookup --engine reference`, and the "reference" engine built
 * from the same routes); a live table changed by a writer while two reader threads look up
 * (every bulk answer from one whole version); every error path.
 *
 *   test_live TABLE ADDRESSES EXPECTED SCRATCH_DIR      (TABLE: the text format)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipfib.h"
#include "check.h"

/* The declarations of the data-plane issue: a redeclaration that differs from the header is a
 * compile error, so the header cannot drift from the contract. (The bulk reader lookups return
 * -1 for a NULL reader or array, as ipfib_lookup_v4_bulk does, where the issue wrote void.) */
ipfib_table *ipfib_table_new(void);
ipfib_table *ipfib_table_load(const char *path, char *err, size_t errlen);
void ipfib_table_free(ipfib_table *t);
int ipfib_table_insert(ipfib_table *t, const char *prefix, uint32_t next_hop, char *err,
                       size_t errlen);
int ipfib_table_remove(ipfib_table *t, const char *prefix, char *err, size_t errlen);
size_t ipfib_table_len(const ipfib_table *t);
size_t ipfib_table_routes(const ipfib_table *t, ipfib_route *routes, size_t cap);
ipfib_fib *ipfib_fib_build(const ipfib_table *t, const char *engine, char *err, size_t errlen);
ipfib_live *ipfib_live_new(const ipfib_table *t, const char *engine, uint32_t delay_us,
                           char *err, size_t errlen);
void ipfib_live_free(ipfib_live *l);
int ipfib_live_insert(const ipfib_live *l, const char *prefix, uint32_t next_hop, char *err,
                      size_t errlen);
int ipfib_live_remove(const ipfib_live *l, const char *prefix, char *err, size_t errlen);
int ipfib_live_apply(const ipfib_live *l, const ipfib_update *u, size_t n, char *err,
                     size_t errlen);
int ipfib_live_flush(const ipfib_live *l, char *err, size_t errlen);
int ipfib_live_save(const ipfib_live *l, const char *path, char *err, size_t errlen);
ipfib_reader *ipfib_live_reader(const ipfib_live *l);
void ipfib_reader_free(ipfib_reader *r);
int ipfib_reader_lookup_v4(ipfib_reader *r, uint32_t addr, uint32_t *next_hop);
int ipfib_reader_lookup_v6(ipfib_reader *r, const uint8_t addr[16], uint32_t *next_hop);
int ipfib_reader_lookup_v4_bulk(ipfib_reader *r, const uint32_t *addrs, uint32_t *next_hops,
                                size_t n, uint32_t miss);
int ipfib_reader_lookup_v6_bulk(ipfib_reader *r, const uint8_t (*addrs)[16],
                                uint32_t *next_hops, size_t n, uint32_t miss);

static uint32_t out4[MAX], out6[MAX];

/* The routes of the table file. */
typedef struct {
    char prefix[64];
    uint32_t next_hop;
} route;
static route *routes;
static size_t nroutes;

static int read_routes(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 1024;
    routes = malloc(cap * sizeof *routes);
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char prefix[64];
        unsigned long hop;
        if (line[0] == '#' || sscanf(line, "%63s %lu", prefix, &hop) != 2) continue;
        if (nroutes == cap) routes = realloc(routes, (cap *= 2) * sizeof *routes);
        strcpy(routes[nroutes].prefix, prefix);
        routes[nroutes++].next_hop = (uint32_t)hop;
    }
    fclose(f);
    return 0;
}

/* A route's prefix as an address and a depth: IPv4 in host order, IPv6 as 16 bytes. */
static int binary_prefix(const char *prefix, uint32_t *v4, uint8_t v6[16], uint8_t *depth) {
    char addr[64];
    const char *slash = strchr(prefix, '/');
    size_t len = (size_t)(slash - prefix);
    memcpy(addr, prefix, len);
    addr[len] = '\0';
    *depth = (uint8_t)atoi(slash + 1);
    struct in_addr a;
    if (inet_pton(AF_INET, addr, &a) == 1) {
        *v4 = ntohl(a.s_addr);
        return 4;
    }
    return inet_pton(AF_INET6, addr, v6) == 1 ? 6 : 0;
}

/* Inserts route i as text (even i) or as an address and depth (odd i). */
static int insert_route(ipfib_table *t, size_t i, char *err, size_t errlen) {
    if (i % 2 == 0) return ipfib_table_insert(t, routes[i].prefix, routes[i].next_hop, err, errlen);
    uint32_t v4;
    uint8_t v6[16], depth;
    int family = binary_prefix(routes[i].prefix, &v4, v6, &depth);
    return family == 4 ? ipfib_table_insert_v4(t, v4, depth, routes[i].next_hop, err, errlen)
                       : ipfib_table_insert_v6(t, v6, depth, routes[i].next_hop, err, errlen);
}

/* Every answer of `r` (single and bulk) against `want4`/`want6`. */
static void check_reader(ipfib_reader *r, const uint32_t *want4, const uint32_t *want6,
                         const char *what) {
    size_t bad = 0;
    for (size_t i = 0; i < n4; i++) {
        uint32_t hop = 12345;
        int found = ipfib_reader_lookup_v4(r, v4s[i], &hop);
        bad += (found == 1 ? hop : MISS) != want4[i];
    }
    for (size_t i = 0; i < n6; i++) {
        uint32_t hop = 12345;
        int found = ipfib_reader_lookup_v6(r, v6s[i], &hop);
        bad += (found == 1 ? hop : MISS) != want6[i];
    }
    CHECK(ipfib_reader_lookup_v4_bulk(r, v4s, out4, n4, MISS) == 0, "%s: v4 bulk", what);
    CHECK(ipfib_reader_lookup_v6_bulk(r, (const uint8_t(*)[16])v6s, out6, n6, MISS) == 0,
          "%s: v6 bulk", what);
    for (size_t i = 0; i < n4; i++) bad += out4[i] != want4[i];
    for (size_t i = 0; i < n6; i++) bad += out6[i] != want6[i];
    CHECK(bad == 0, "%s: %zu of %zu answers differ", what, bad, 2 * (n4 + n6));
}

/* The answers of a table built from `t` with `engine`, into `want4`/`want6`. */
static void answers_of(const ipfib_table *t, const char *engine, uint32_t *want4,
                       uint32_t *want6) {
    char err[512];
    ipfib_fib *fib = ipfib_fib_build(t, engine, err, sizeof err);
    CHECK(fib != NULL, "build with %s: %s", engine, err);
    if (fib == NULL) return;
    ipfib_lookup_v4_bulk(fib, v4s, want4, n4, MISS);
    ipfib_lookup_v6_bulk(fib, (const uint8_t(*)[16])v6s, want6, n6, MISS);
    ipfib_fib_free(fib);
}

/* ---- A writer and two readers: every bulk answer from one version, versions in order. ---- */

#define SLOTS 256
#define VERSIONS 300
static uint32_t race4[SLOTS];
static uint8_t race6[SLOTS][16];
static int race_done; /* set once the writer has flushed its last batch */

typedef struct {
    ipfib_live *live;
    size_t lookups, mixed, backwards, wrong;
} race_reader;

/* Every route of the race table has the version number as its next hop: a bulk answer from
 * one whole version has one value throughout. */
static void *race_read(void *arg) {
    race_reader *rr = arg;
    ipfib_reader *r = ipfib_live_reader(rr->live);
    uint32_t out[SLOTS], last = 0;
    while (last < VERSIONS && !__atomic_load_n(&race_done, __ATOMIC_ACQUIRE)) {
        for (int family = 4; family <= 6; family += 2) {
            int rc = family == 4 ? ipfib_reader_lookup_v4_bulk(r, race4, out, SLOTS, MISS)
                                 : ipfib_reader_lookup_v6_bulk(r, (const uint8_t(*)[16])race6,
                                                               out, SLOTS, MISS);
            rr->wrong += rc != 0;
            for (size_t i = 1; i < SLOTS; i++) rr->mixed += out[i] != out[0];
            rr->backwards += out[0] < last;
            if (out[0] > last) last = out[0];
            rr->lookups += SLOTS;
        }
    }
    ipfib_reader_free(r);
    return NULL;
}

static void race(void) {
    char err[512], prefixes[2 * SLOTS][48];
    ipfib_table *t = ipfib_table_new();
    for (int i = 0; i < SLOTS; i++) {
        snprintf(prefixes[2 * i], sizeof prefixes[0], "10.%d.0.0/16", i);
        snprintf(prefixes[2 * i + 1], sizeof prefixes[0], "2001:db8:%x::/48", i);
        race4[i] = (10u << 24) | ((uint32_t)i << 16) | 7;
        char a[48];
        snprintf(a, sizeof a, "2001:db8:%x::7", i);
        inet_pton(AF_INET6, a, race6[i]);
        ipfib_table_insert(t, prefixes[2 * i], 0, err, sizeof err);
        ipfib_table_insert(t, prefixes[2 * i + 1], 0, err, sizeof err);
    }
    ipfib_live *live = ipfib_live_new(t, NULL, 50, err, sizeof err);
    CHECK(live != NULL, "race: live table: %s", err);
    ipfib_table_free(t);
    if (live == NULL) return;
    race_reader readers[2] = {{live, 0, 0, 0, 0}, {live, 0, 0, 0, 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, race_read, &readers[i]);
    ipfib_update batch[2 * SLOTS];
    for (uint32_t v = 1; v <= VERSIONS; v++) {
        for (int i = 0; i < 2 * SLOTS; i++)
            batch[i] = (ipfib_update){prefixes[i], v, 0};
        CHECK(ipfib_live_apply(live, batch, 2 * SLOTS, err, sizeof err) == 0, "race: apply %u: %s",
              v, err);
        if (v % 10 == 0) CHECK(ipfib_live_flush(live, err, sizeof err) == 0, "race: flush: %s", err);
    }
    CHECK(ipfib_live_flush(live, err, sizeof err) == 0, "race: final flush: %s", err);
    __atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK(readers[i].mixed == 0, "race: reader %d saw %zu answers from another version", i,
              readers[i].mixed);
        CHECK(readers[i].backwards == 0, "race: reader %d went back %zu times", i,
              readers[i].backwards);
        CHECK(readers[i].wrong == 0, "race: reader %d: %zu failed bulk calls", i, readers[i].wrong);
    }
    printf("C tests (live): race: 2 readers did %zu and %zu lookups during %d published batches: "
           "no mixed or older answer\n",
           readers[0].lookups, readers[1].lookups, VERSIONS);
    ipfib_live_free(live);
}

/* ---- Error paths: a message naming the problem, nothing changed, no crash. ---- */

static void errors(const char *table_path) {
    char err[512];
    ipfib_table *t = ipfib_table_new();
    CHECK(ipfib_table_insert(t, "10.0.0.0/8", 1, err, sizeof err) == 0, "insert: %s", err);
    CHECK(ipfib_table_insert(t, "2001:db8::/32", 2, err, sizeof err) == 0, "insert: %s", err);
    static const char *bad[][2] = {
        {"10.0.0.1/8", "host bits"},     {"10.0.0.0/33", "33"},
        {"2001:db8::/129", "129"},       {"2001:db8::1/32", "host bits"},
        {"10.0.0.0", "10.0.0.0"},        {"garbage/8", "garbage"},
        {"", "not a prefix"},            {" 10.0.0.0/8", "10.0.0.0/8"},
        {"010.0.0.0/8", "010.0.0.0"},    {"10.0.0.0/-1", "-1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(ipfib_table_insert(t, bad[i][0], 3, err, sizeof err) == -1 &&
                  strstr(err, bad[i][1]) != NULL,
              "insert \"%s\" must fail naming \"%s\", got: %s", bad[i][0], bad[i][1], err);
        err[0] = '\0';
        CHECK(ipfib_table_remove(t, bad[i][0], err, sizeof err) == -1 && err[0] != '\0',
              "remove \"%s\" must fail, got: %s", bad[i][0], err);
    }
    CHECK(ipfib_table_len(t) == 2, "refused changes leave the set as it was");
    uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
    CHECK(ipfib_table_insert_v4(t, 0x0a000001u, 8, 3, err, sizeof err) == -1 &&
              strstr(err, "host bits"), "binary v4 host bits: %s", err);
    CHECK(ipfib_table_insert_v4(t, 0, 33, 3, err, sizeof err) == -1 && strstr(err, "33"),
          "binary v4 depth 33: %s", err);
    CHECK(ipfib_table_insert_v6(t, v6, 32, 3, err, sizeof err) == -1 && strstr(err, "host bits"),
          "binary v6 host bits: %s", err);
    CHECK(ipfib_table_insert_v6(t, v6, 129, 3, err, sizeof err) == -1 && strstr(err, "129"),
          "binary v6 depth 129: %s", err);
    CHECK(ipfib_table_insert_v6(t, NULL, 0, 3, err, sizeof err) == -1 && strstr(err, "NULL"),
          "binary v6 NULL address: %s", err);
    CHECK(ipfib_table_remove(t, "192.0.2.0/24", err, sizeof err) == 0, "remove of an absent route");
    CHECK(ipfib_table_remove_v4(t, 0x0a000000u, 8, err, sizeof err) == 1, "remove_v4: %s", err);
    CHECK(ipfib_table_insert_v4(t, 0x0a000000u, 8, 1, err, sizeof err) == 0, "insert_v4: %s", err);
    CHECK(ipfib_table_len(t) == 2, "binary remove and insert");
    CHECK(ipfib_table_insert(NULL, "10.0.0.0/8", 1, err, sizeof err) == -1 && strstr(err, "NULL"),
          "insert into NULL: %s", err);
    CHECK(ipfib_table_insert(t, NULL, 1, err, sizeof err) == -1 && strstr(err, "NULL"),
          "insert of a NULL prefix: %s", err);
    CHECK(ipfib_table_remove(NULL, "10.0.0.0/8", err, sizeof err) == -1, "remove from NULL");
    CHECK(ipfib_table_len(NULL) == 0, "length of NULL");
    CHECK(ipfib_table_insert(t, "10.0.0.1/8", 1, NULL, 0) == -1, "err may be NULL");
    char tiny[6];
    CHECK(ipfib_table_insert(t, "10.0.0.1/8", 1, tiny, sizeof tiny) == -1 &&
              strlen(tiny) == sizeof tiny - 1,
          "a short err buffer gets a truncated, terminated message");
    CHECK(ipfib_table_load("/nonexistent/routes.txt", err, sizeof err) == NULL &&
              strstr(err, "/nonexistent/routes.txt"), "load a missing file: %s", err);
    CHECK(ipfib_table_load(NULL, err, sizeof err) == NULL, "load NULL");
    ipfib_table *loaded = ipfib_table_load(table_path, err, sizeof err);
    CHECK(loaded != NULL && ipfib_table_len(loaded) > 0, "load %s: %s", table_path, err);
    ipfib_table_free(loaded);

    CHECK(ipfib_fib_build(NULL, NULL, err, sizeof err) == NULL && strstr(err, "NULL"),
          "build NULL: %s", err);
    CHECK(ipfib_fib_build(t, "no-such-engine", err, sizeof err) == NULL &&
              strstr(err, "no-such-engine"), "build, bad engine: %s", err);
    CHECK(ipfib_fib_build(t, "dxr", err, sizeof err) == NULL && strstr(err, "IPv6"),
          "dxr cannot hold IPv6 routes: %s", err);
    CHECK(ipfib_live_new(NULL, NULL, 0, err, sizeof err) == NULL && strstr(err, "NULL"),
          "live from NULL: %s", err);
    CHECK(ipfib_live_new(t, "no-such-engine", 0, err, sizeof err) == NULL &&
              strstr(err, "no-such-engine"), "live, bad engine: %s", err);
    CHECK(ipfib_live_new(t, "dxr", 0, err, sizeof err) == NULL && strstr(err, "IPv6"),
          "live dxr with IPv6 routes: %s", err);

    /* A live table refuses bad changes whole: nothing of a refused batch is applied. */
    ipfib_live *live = ipfib_live_new(t, NULL, 0, err, sizeof err);
    CHECK(live != NULL, "live: %s", err);
    ipfib_reader *r = ipfib_live_reader(live);
    ipfib_update batch[] = {
        {"192.0.2.0/24", 5, 0}, {"10.0.0.0/8", 0, 1}, {"198.51.100.1/24", 6, 0}, {"::/0", 7, 0}};
    err[0] = '\0';
    CHECK(ipfib_live_apply(live, batch, 4, err, sizeof err) == -1 && strstr(err, "update 2") &&
              strstr(err, "host bits"), "a batch with a bad update 2 must fail naming it: %s", err);
    batch[2].prefix = NULL;
    CHECK(ipfib_live_apply(live, batch, 4, err, sizeof err) == -1 && strstr(err, "update 2") &&
              strstr(err, "NULL"), "a batch with a NULL prefix: %s", err);
    CHECK(ipfib_live_apply(live, NULL, 1, err, sizeof err) == -1, "NULL updates");
    CHECK(ipfib_live_apply(live, NULL, 0, err, sizeof err) == 0, "no updates");
    CHECK(ipfib_live_insert(live, "10.0.0.1/8", 1, err, sizeof err) == -1 && strstr(err, "host bits"),
          "live insert, host bits: %s", err);
    CHECK(ipfib_live_remove(live, "10.0.0.0/33", err, sizeof err) == -1, "live remove, /33");
    CHECK(ipfib_live_insert_v4(live, 0, 33, 1, err, sizeof err) == -1, "live insert_v4, depth 33");
    CHECK(ipfib_live_insert_v6(live, NULL, 0, 1, err, sizeof err) == -1, "live insert_v6, NULL");
    CHECK(ipfib_live_remove_v6(live, v6, 32, err, sizeof err) == -1, "live remove_v6, host bits");
    CHECK(ipfib_live_flush(live, err, sizeof err) == 0, "flush: %s", err);
    uint32_t hop = 0;
    CHECK(ipfib_reader_lookup_v4(r, 0xc0000201u, &hop) == 0, "nothing of a refused batch applied");
    CHECK(ipfib_reader_lookup_v4(r, 0x0a010203u, &hop) == 1 && hop == 1,
          "nothing of a refused batch applied (the withdrawal neither)");
    ipfib_table *none = ipfib_table_new();
    ipfib_live *v4only = ipfib_live_new(none, "dxr", 0, err, sizeof err);
    ipfib_table_free(none);
    CHECK(v4only != NULL, "dxr live table without IPv6 routes: %s", err);
    CHECK(ipfib_live_insert(v4only, "2001:db8::/32", 1, err, sizeof err) == -1 &&
              strstr(err, "IPv6"), "an IPv6 route into a dxr live table: %s", err);
    ipfib_live_free(v4only);
    CHECK(ipfib_live_insert(NULL, "10.0.0.0/8", 1, err, sizeof err) == -1 && strstr(err, "NULL"),
          "insert into a NULL live table: %s", err);
    CHECK(ipfib_live_flush(NULL, err, sizeof err) == -1, "flush NULL");
    CHECK(ipfib_live_save(NULL, "/tmp/x", err, sizeof err) == -1, "save NULL");
    CHECK(ipfib_live_save(live, NULL, err, sizeof err) == -1, "save to a NULL path");
    CHECK(ipfib_live_save(live, "/nonexistent/dir/t.ipfib", err, sizeof err) == -1 &&
              strstr(err, "/nonexistent/dir"), "save into a missing directory: %s", err);
    CHECK(ipfib_live_reader(NULL) == NULL, "reader of NULL");
    CHECK(ipfib_live_table(NULL) == NULL, "routes of NULL");
    CHECK(ipfib_reader_lookup_v4(NULL, 1, &hop) == -1, "lookup in a NULL reader");
    CHECK(ipfib_reader_lookup_v4(r, 1, NULL) == -1, "lookup into a NULL next hop");
    CHECK(ipfib_reader_lookup_v6(r, NULL, &hop) == -1, "lookup of a NULL address");
    CHECK(ipfib_reader_lookup_v4_bulk(NULL, v4s, out4, 1, MISS) == -1, "bulk in a NULL reader");
    CHECK(ipfib_reader_lookup_v6_bulk(r, NULL, out6, 1, MISS) == -1, "bulk of NULL addresses");
    CHECK(ipfib_reader_lookup_v4_bulk(r, NULL, NULL, 0, MISS) == 0, "n = 0 with NULL arrays");

    /* A reader outlives its live table, answering from the last version. */
    ipfib_live_free(live);
    CHECK(ipfib_reader_lookup_v4(r, 0x0a010203u, &hop) == 1 && hop == 1, "reader after free");
    ipfib_reader_free(r);
    ipfib_reader_free(NULL);
    ipfib_live_free(NULL);
    ipfib_table_free(t);
    ipfib_table_free(NULL);
    CHECK(strcmp(ipfib_version(), IPFIB_VERSION) == 0, "library %s, header %s", ipfib_version(),
          IPFIB_VERSION);
}

/* The routes of a route set, in order (freed by the caller). */
static ipfib_route *routes_of(const ipfib_table *t, size_t *n) {
    *n = ipfib_table_len(t);
    ipfib_route *out = calloc(*n + 1, sizeof *out);
    CHECK(out != NULL && ipfib_table_routes(t, out, *n) == *n, "copying %zu routes", *n);
    return out;
}

/* A hand-made update stream (text form) replayed over a base table, under both peer rules;
 * the route changes and final sets worked out by hand from the rules in ipfib replay --help. */
static void replay(const char *dir) {
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/c-test-updates.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f == NULL) return;
    fputs("1000 A 10.0.0.0/8 192.0.2.2 198.51.100.1\n"   /* hop 1; replaces the base's 99 */
          "1000 A 10.0.0.0/8 192.0.2.1 198.51.100.2\n"   /* hop 2, a lower peer: wins */
          "1001 W 10.0.0.0/8 192.0.2.2\n"                /* not the best: no change */
          "1001 A 2001:db8::/32 192.0.2.1 198.51.100.1\n" /* hop 1 */
          "1002 W 10.0.0.0/8 192.0.2.1\n"                /* back to the base's 99 */
          "1002 A 11.0.0.0/8 192.0.2.3 198.51.100.3\n",  /* hop 3 */
          f);
    fclose(f);
    ipfib_table *base = ipfib_table_new();
    CHECK(ipfib_table_insert(base, "10.0.0.0/8", 99, err, sizeof err) == 0, "insert: %s", err);

    ipfib_replay *all = ipfib_replay_load(path, base, "all", err, sizeof err);
    CHECK(all != NULL, "replay_load all: %s", err);
    if (all == NULL) return;
    CHECK(ipfib_replay_len(all) == 5, "all peers: %zu changes, want 5", ipfib_replay_len(all));
    /* Whole-second stamps are spread over their second: the last change is at 2.5 s. */
    CHECK(ipfib_replay_span(all) == 2.5, "span %f, want 2.5", ipfib_replay_span(all));
    ipfib_table *want = ipfib_replay_final(all);
    ipfib_table *expect = ipfib_table_new();
    CHECK(ipfib_table_insert(expect, "10.0.0.0/8", 99, err, sizeof err) == 0 &&
              ipfib_table_insert(expect, "11.0.0.0/8", 3, err, sizeof err) == 0 &&
              ipfib_table_insert(expect, "2001:db8::/32", 1, err, sizeof err) == 0,
          "insert: %s", err);
    size_t nw, ne, nl;
    ipfib_route *w = routes_of(want, &nw), *e = routes_of(expect, &ne);
    CHECK(nw == ne && memcmp(w, e, nw * sizeof *w) == 0, "final set: %zu routes, want %zu", nw,
          ne);

    ipfib_live *live = ipfib_live_new(base, NULL, 100, err, sizeof err);
    CHECK(live != NULL, "live_new: %s", err);
    ipfib_reader *r = ipfib_live_reader(live);
    ipfib_replay_result res;
    memset(&res, 0xff, sizeof res);
    CHECK(ipfib_replay_run(all, live, 100.0, &res, err, sizeof err) == 0, "replay_run: %s", err);
    CHECK(res.updates == 5 && res.publishes >= 1 && res.publishes <= 5,
          "result: %llu updates, %llu publishes", (unsigned long long)res.updates,
          (unsigned long long)res.publishes);
    CHECK(res.seconds >= 0.02 && res.seconds < 5.0, "2.5 s at 100x took %f s", res.seconds);
    CHECK(res.visible_us_p50 >= 0 && res.visible_us_p50 <= res.visible_us_p99 &&
              res.visible_us_p99 <= res.visible_us_max && res.visible_us_max < 5e6,
          "visibility p50 %f p99 %f max %f", res.visible_us_p50, res.visible_us_p99,
          res.visible_us_max);
    ipfib_table *now = ipfib_live_table(live);
    ipfib_route *l = routes_of(now, &nl);
    CHECK(nl == ne && memcmp(l, e, nl * sizeof *l) == 0, "live table after the replay");
    uint32_t hop = 0;
    CHECK(ipfib_reader_lookup_v4(r, 0x0a010203u, &hop) == 1 && hop == 99, "10.1.2.3 -> %u", hop);
    CHECK(ipfib_reader_lookup_v4(r, 0x0b000001u, &hop) == 1 && hop == 3, "11.0.0.1 -> %u", hop);
    /* Again, as fast as possible: the same table (every change is idempotent by now). */
    CHECK(ipfib_replay_run(all, live, 0.0, NULL, err, sizeof err) == 0, "replay max: %s", err);
    free(l);
    ipfib_table_free(now);
    now = ipfib_live_table(live);
    l = routes_of(now, &nl);
    CHECK(nl == ne && memcmp(l, e, nl * sizeof *l) == 0, "live table after the fast replay");

    /* One peer: its announcements and withdrawals, base routes included. */
    ipfib_replay *one = ipfib_replay_load(path, base, "192.0.2.1", err, sizeof err);
    CHECK(one != NULL && ipfib_replay_len(one) == 3, "one peer: %s", one ? "3 changes" : err);
    ipfib_table *fin = ipfib_replay_final(one);
    uint8_t db8[16] = {0x20, 0x01, 0x0d, 0xb8};
    ipfib_fib *fib = ipfib_fib_build(fin, "reference", err, sizeof err);
    CHECK(ipfib_table_len(fin) == 1 && fib != NULL &&
              ipfib_lookup_v6(fib, db8, &hop) == 1 && hop == 2 &&
              ipfib_lookup_v4(fib, 0x0a000001u, &hop) == 0,
          "one peer's final set");

    /* Errors. */
    static const char *bad_peer[][2] = {{"x", "peer"}, {"203.0.113.1", "no route changes"}};
    for (size_t i = 0; i < 2; i++) {
        err[0] = '\0';
        CHECK(ipfib_replay_load(path, base, bad_peer[i][0], err, sizeof err) == NULL &&
                  strstr(err, bad_peer[i][1]) != NULL,
              "peer %s must fail naming \"%s\": %s", bad_peer[i][0], bad_peer[i][1], err);
    }
    err[0] = '\0';
    CHECK(ipfib_replay_load("/nonexistent/updates", NULL, NULL, err, sizeof err) == NULL &&
              strstr(err, "/nonexistent/updates") != NULL,
          "missing file: %s", err);
    CHECK(ipfib_replay_load(NULL, NULL, NULL, err, sizeof err) == NULL, "NULL path");
    CHECK(ipfib_replay_run(NULL, live, 1.0, &res, err, sizeof err) == -1 &&
              strstr(err, "NULL") != NULL,
          "NULL replay: %s", err);
    CHECK(ipfib_replay_run(all, NULL, 1.0, &res, err, sizeof err) == -1, "NULL live table");
    CHECK(ipfib_replay_run(all, live, 0.0 / 0.0, &res, err, sizeof err) == -1 &&
              strstr(err, "NaN") != NULL,
          "NaN speed: %s", err);
    CHECK(ipfib_replay_run(all, live, 1e-300, &res, err, sizeof err) == -1 &&
              strstr(err, "clock") != NULL,
          "tiny speed: %s", err);
    CHECK(ipfib_replay_len(NULL) == 0 && ipfib_replay_span(NULL) == 0.0 &&
              ipfib_replay_final(NULL) == NULL,
          "NULL replay queries");

    ipfib_fib_free(fib);
    ipfib_table_free(fin);
    ipfib_replay_free(one);
    ipfib_replay_free(NULL);
    free(w);
    free(e);
    free(l);
    ipfib_table_free(now);
    ipfib_reader_free(r);
    ipfib_live_free(live);
    ipfib_table_free(want);
    ipfib_table_free(expect);
    ipfib_replay_free(all);
    ipfib_table_free(base);
    remove(path);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s TABLE ADDRESSES EXPECTED SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    if (load_addresses(argv[2], argv[3]) != 0 || read_routes(argv[1]) != 0) return 2;
    char err[512];

    /* The route set one route at a time, as the whole file loads it. */
    ipfib_table *t = ipfib_table_new();
    size_t refused = 0;
    for (size_t i = 0; i < nroutes; i++) refused += insert_route(t, i, err, sizeof err) != 0;
    CHECK(refused == 0, "%zu routes refused, the last: %s", refused, err);
    ipfib_table *loaded = ipfib_table_load(argv[1], err, sizeof err);
    CHECK(loaded != NULL, "load: %s", err);
    CHECK(ipfib_table_len(t) == ipfib_table_len(loaded), "%zu routes inserted, %zu loaded",
          ipfib_table_len(t), ipfib_table_len(loaded));
    ipfib_table_free(loaded);
    static uint32_t want4[MAX], want6[MAX];
    answers_of(t, NULL, want4, want6);
    size_t bad = 0;
    for (size_t i = 0; i < n4; i++) bad += want4[i] != v4_want[i];
    for (size_t i = 0; i < n6; i++) bad += want6[i] != v6_want[i];
    CHECK(bad == 0, "planb built from the inserted routes: %zu answers differ", bad);

    /* The routes copied out (IPv4 first, in order) and inserted in binary form into another
     * set: the same routes, the same answers. */
    size_t count = ipfib_table_routes(t, NULL, 0);
    CHECK(count == ipfib_table_len(t), "routes: %zu, length %zu", count, ipfib_table_len(t));
    ipfib_route *copied = calloc(count + 1, sizeof *copied);
    CHECK(ipfib_table_routes(t, copied, count + 1) == count, "routes copied");
    ipfib_table *again = ipfib_table_new();
    size_t out_of_order = 0;
    for (size_t i = 0; i < count; i++) {
        const ipfib_route *c = &copied[i];
        int rc = c->family == 4 ? ipfib_table_insert_v4(again, c->v4, c->depth, c->next_hop, err, sizeof err)
                                : ipfib_table_insert_v6(again, c->v6, c->depth, c->next_hop, err, sizeof err);
        CHECK(rc == 0 && (c->family == 4 || c->family == 6), "copied route %zu: %s", i, err);
        if (i > 0) {
            const ipfib_route *p = &copied[i - 1];
            int cmp = p->family != c->family ? (p->family < c->family ? -1 : 1)
                      : c->family == 4 ? (p->v4 != c->v4 ? (p->v4 < c->v4 ? -1 : 1) : 0)
                                       : memcmp(p->v6, c->v6, 16);
            out_of_order += cmp > 0 || (cmp == 0 && p->depth >= c->depth);
        }
    }
    CHECK(out_of_order == 0, "%zu routes out of order", out_of_order);
    CHECK(ipfib_table_len(again) == count, "copied set: %zu of %zu routes", ipfib_table_len(again), count);
    static uint32_t again4[MAX], again6[MAX];
    answers_of(again, NULL, again4, again6);
    bad = 0;
    for (size_t i = 0; i < n4; i++) bad += again4[i] != v4_want[i];
    for (size_t i = 0; i < n6; i++) bad += again6[i] != v6_want[i];
    CHECK(bad == 0, "the copied routes: %zu answers differ", bad);
    if (count > 1) {
        ipfib_route first[2];
        memset(first, 0xab, sizeof first);
        CHECK(ipfib_table_routes(t, first, 1) == count && first[1].family == 0xab,
              "a short array gets only what fits");
    }
    CHECK(ipfib_table_routes(NULL, copied, count) == 0, "routes of NULL");
    CHECK(ipfib_table_routes(t, NULL, 5) == 0, "routes into NULL");
    free(copied);
    ipfib_table_free(again);

    /* A live table, empty at first, fed in batches of up to 4096 changes. */
    ipfib_table *empty = ipfib_table_new();
    ipfib_live *live = ipfib_live_new(empty, NULL, 100, err, sizeof err);
    ipfib_table_free(empty);
    CHECK(live != NULL, "live: %s", err);
    if (live == NULL) return finish("live tables");
    ipfib_reader *r = ipfib_live_reader(live);
    ipfib_update *batch = malloc(4096 * sizeof *batch);
    for (size_t i = 0; i < nroutes; i += 4096) {
        size_t n = nroutes - i < 4096 ? nroutes - i : 4096;
        for (size_t k = 0; k < n; k++)
            batch[k] = (ipfib_update){routes[i + k].prefix, routes[i + k].next_hop, 0};
        CHECK(ipfib_live_apply(live, batch, n, err, sizeof err) == 0, "apply: %s", err);
    }
    free(batch);
    CHECK(ipfib_live_flush(live, err, sizeof err) == 0, "flush: %s", err);
    check_reader(r, v4_want, v6_want, "live table fed in batches");

    /* Every third route removed (text and binary), every fifth given another next hop (single
     * inserts), against the reference engine built from a route set changed the same way. */
    for (size_t i = 0; i < nroutes; i++) {
        uint32_t v4;
        uint8_t v6[16], depth;
        int family = binary_prefix(routes[i].prefix, &v4, v6, &depth);
        if (i % 3 == 0) {
            int rc = i % 2 ? ipfib_live_remove(live, routes[i].prefix, err, sizeof err)
                     : family == 4 ? ipfib_live_remove_v4(live, v4, depth, err, sizeof err)
                                   : ipfib_live_remove_v6(live, v6, depth, err, sizeof err);
            CHECK(rc == 0, "remove %s: %s", routes[i].prefix, err);
            CHECK(ipfib_table_remove(t, routes[i].prefix, err, sizeof err) != -1, "table remove: %s", err);
        } else if (i % 5 == 0) {
            uint32_t hop = routes[i].next_hop ^ 0x5a5a;
            int rc = i % 2 ? ipfib_live_insert(live, routes[i].prefix, hop, err, sizeof err)
                     : family == 4 ? ipfib_live_insert_v4(live, v4, depth, hop, err, sizeof err)
                                   : ipfib_live_insert_v6(live, v6, depth, hop, err, sizeof err);
            CHECK(rc == 0, "insert %s: %s", routes[i].prefix, err);
            CHECK(ipfib_table_insert(t, routes[i].prefix, hop, err, sizeof err) == 0, "table insert");
        }
    }
    CHECK(ipfib_live_flush(live, err, sizeof err) == 0, "flush: %s", err);
    answers_of(t, "reference", want4, want6);
    check_reader(r, want4, want6, "live table after single removals and inserts");
    ipfib_table *now = ipfib_live_table(live);
    CHECK(ipfib_table_len(now) == ipfib_table_len(t), "live routes %zu, expected %zu",
          ipfib_table_len(now), ipfib_table_len(t));
    ipfib_table_free(now);

    /* Saved, and opened again: the same answers. */
    char saved[1024];
    snprintf(saved, sizeof saved, "%s/c-test-live.ipfib", argv[4]);
    CHECK(ipfib_live_save(live, saved, err, sizeof err) == 0, "live save: %s", err);
    ipfib_fib *reopened = ipfib_fib_open(saved, NULL, err, sizeof err);
    CHECK(reopened != NULL, "reopen: %s", err);
    if (reopened != NULL) {
        ipfib_lookup_v4_bulk(reopened, v4s, out4, n4, MISS);
        ipfib_lookup_v6_bulk(reopened, (const uint8_t(*)[16])v6s, out6, n6, MISS);
        size_t differ = 0;
        for (size_t i = 0; i < n4; i++) differ += out4[i] != want4[i];
        for (size_t i = 0; i < n6; i++) differ += out6[i] != want6[i];
        CHECK(differ == 0, "the saved live table: %zu answers differ", differ);
    }
    ipfib_fib_free(reopened);
    remove(saved);
    ipfib_reader_free(r);
    ipfib_live_free(live);
    ipfib_table_free(t);
    free(routes);

    race();
    errors(argv[1]);
    replay(argv[4]);
    return finish("route sets and live tables: batches, single changes, readers, save, replay, "
                  "errors");
}
