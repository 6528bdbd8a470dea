/* C tests of the ipfib library: the contract declarations, answers against the Rust reference
 * (a file of expected answers written by `ipfib lookup --engine reference`), single against
 * bulk lookups, save and reopen, and the error paths.
 *
 *   test TABLE ADDRESSES EXPECTED SCRATCH_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipfib.h"
#include "check.h"

/* The declarations as the issue states them: a redeclaration that differs from the header is
 * a compile error, so the header cannot drift from the contract. */
typedef struct ipfib_fib ipfib_fib;
ipfib_fib *ipfib_fib_open(const char *path, const char *engine, char *err, size_t errlen);
ipfib_fib *ipfib_fib_open_mapped(const char *path, const char *engine, char *err, size_t errlen);
int  ipfib_fib_save(const ipfib_fib *fib, const char *path, char *err, size_t errlen);
void ipfib_fib_free(ipfib_fib *fib);
int  ipfib_lookup_v4(const ipfib_fib *fib, uint32_t addr, uint32_t *next_hop);
int  ipfib_lookup_v6(const ipfib_fib *fib, const uint8_t addr[16], uint32_t *next_hop);
int  ipfib_lookup_v4_bulk(const ipfib_fib *fib, const uint32_t *addrs, uint32_t *next_hops,
                          size_t n, uint32_t miss);
int  ipfib_lookup_v6_bulk(const ipfib_fib *fib, const uint8_t (*addrs)[16], uint32_t *next_hops,
                          size_t n, uint32_t miss);

static uint32_t out4[MAX], out6[MAX];

/* Compares every answer of `fib` with the expected ones, singly and in bulk. */
static void check_answers(const ipfib_fib *fib, size_t n4, size_t n6, const char *what) {
    size_t bad = 0;
    for (size_t i = 0; i < n4; i++) {
        uint32_t hop = 12345;
        int found = ipfib_lookup_v4(fib, v4s[i], &hop);
        if ((found == 1 ? hop : MISS) != v4_want[i]) bad++;
    }
    for (size_t i = 0; i < n6; i++) {
        uint32_t hop = 12345;
        int found = ipfib_lookup_v6(fib, v6s[i], &hop);
        if ((found == 1 ? hop : MISS) != v6_want[i]) bad++;
    }
    CHECK(ipfib_lookup_v4_bulk(fib, v4s, out4, n4, MISS) == 0, "v4 bulk");
    CHECK(ipfib_lookup_v6_bulk(fib, (const uint8_t(*)[16])v6s, out6, n6, MISS) == 0, "v6 bulk");
    for (size_t i = 0; i < n4; i++) bad += out4[i] != v4_want[i];
    for (size_t i = 0; i < n6; i++) bad += out6[i] != v6_want[i];
    CHECK(ipfib_lookup_v6_bulk(fib, NULL, NULL, 0, MISS) == 0, "n = 0: nothing read or written");
    CHECK(bad == 0, "%s: %zu of %zu answers differ from the reference", what, bad, 2 * (n4 + n6));
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s TABLE ADDRESSES EXPECTED SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    if (load_addresses(argv[2], argv[3]) != 0) return 2;

    char err[512];
    ipfib_fib *fib = ipfib_fib_open(argv[1], NULL, err, sizeof err);
    CHECK(fib != NULL, "open %s: %s", argv[1], err);
    if (fib == NULL) return 1;
    check_answers(fib, n4, n6, "built from the table file");

    /* Save, reopen (mapped), compare. */
    char saved[1024], corrupt[1024];
    snprintf(saved, sizeof saved, "%s/c-test.ipfib", argv[4]);
    snprintf(corrupt, sizeof corrupt, "%s/c-test-corrupt.ipfib", argv[4]);
    CHECK(ipfib_fib_save(fib, saved, err, sizeof err) == 0, "save: %s", err);
    ipfib_fib *reopened = ipfib_fib_open(saved, NULL, err, sizeof err);
    CHECK(reopened != NULL, "reopen: %s", err);
    if (reopened != NULL) check_answers(reopened, n4, n6, "saved and reopened");
    ipfib_fib *other = ipfib_fib_open(saved, "reference", err, sizeof err);
    CHECK(other != NULL, "saved table with another engine: %s", err);
    if (other != NULL) {
        check_answers(other, n4, n6, "saved, reopened with the reference engine");
        CHECK(ipfib_fib_save(other, saved, err, sizeof err) == -1 && strstr(err, "reference"),
              "saving a reference table must fail naming the engine, got: %s", err);
    }
    ipfib_fib_free(other);

    /* The saved table read through a pipe ("/dev/fd/N"): read once, from its first byte. */
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        FILE *in = fopen(saved, "rb");
        char chunk[65536];
        size_t got;
        while (in != NULL && (got = fread(chunk, 1, sizeof chunk, in)) > 0) {
            if (write(fds[1], chunk, got) != (ssize_t)got) _exit(1);
        }
        _exit(in == NULL);
    }
    close(fds[1]);
    char fd_path[64];
    snprintf(fd_path, sizeof fd_path, "/dev/fd/%d", fds[0]);
    ipfib_fib *piped = ipfib_fib_open(fd_path, NULL, err, sizeof err);
    CHECK(piped != NULL, "a saved table through a pipe (%s): %s", fd_path, err);
    if (piped != NULL) check_answers(piped, n4, n6, "saved, read through a pipe");
    ipfib_fib_free(piped);
    close(fds[0]);
    waitpid(child, NULL, 0);

    /* The default open reads the file into memory: truncating it and writing garbage over it
     * afterwards changes nothing (mapped, the first lookup would die with SIGBUS). */
    ipfib_fib *mapped = ipfib_fib_open_mapped(saved, NULL, err, sizeof err);
    CHECK(mapped != NULL, "open mapped: %s", err);
    if (mapped != NULL) check_answers(mapped, n4, n6, "saved and mapped");
    ipfib_fib_free(mapped);
    FILE *clobber = fopen(saved, "wb");
    CHECK(clobber != NULL, "truncate %s", saved);
    if (clobber != NULL) {
        fputs("garbage written over the saved table while it is open\n", clobber);
        fclose(clobber);
    }
    if (reopened != NULL) check_answers(reopened, n4, n6, "saved, reopened, file truncated and overwritten");
    ipfib_fib_free(reopened);
    CHECK(ipfib_fib_save(fib, saved, err, sizeof err) == 0, "save again: %s", err);

    /* NULL tables and arrays: an error return, nothing written, no crash. */
    uint32_t hop = 12345, one = 0x0a000001u;
    uint8_t one6[16] = {0x20, 0x01, 0x0d, 0xb8};
    CHECK(ipfib_lookup_v4(NULL, one, &hop) == -1 && hop == 12345, "v4 lookup in a NULL table");
    CHECK(ipfib_lookup_v6(NULL, one6, &hop) == -1 && hop == 12345, "v6 lookup in a NULL table");
    CHECK(ipfib_lookup_v4(fib, one, NULL) == -1, "v4 lookup into a NULL next hop");
    CHECK(ipfib_lookup_v6(fib, NULL, &hop) == -1, "v6 lookup of a NULL address");
    CHECK(ipfib_lookup_v4_bulk(NULL, &one, &hop, 1, MISS) == -1 && hop == 12345,
          "v4 bulk in a NULL table");
    CHECK(ipfib_lookup_v6_bulk(NULL, (const uint8_t(*)[16])one6, &hop, 1, MISS) == -1 &&
              hop == 12345,
          "v6 bulk in a NULL table");
    CHECK(ipfib_lookup_v4_bulk(fib, NULL, &hop, 1, MISS) == -1, "v4 bulk of NULL addresses");
    CHECK(ipfib_lookup_v6_bulk(fib, (const uint8_t(*)[16])one6, NULL, 1, MISS) == -1,
          "v6 bulk into NULL next hops");
    CHECK(ipfib_lookup_v4_bulk(fib, NULL, NULL, 0, MISS) == 0, "n = 0 with NULL arrays is fine");
    err[0] = '\0';
    CHECK(ipfib_fib_save(NULL, saved, err, sizeof err) == -1 && strstr(err, "NULL") != NULL,
          "saving a NULL table must fail saying so, got: %s", err);

    ipfib_fib_free(fib);
    ipfib_fib_free(NULL);

    /* Error paths. */
    err[0] = '\0';
    CHECK(ipfib_fib_open("/nonexistent/table.txt", NULL, err, sizeof err) == NULL &&
              strstr(err, "/nonexistent/table.txt") != NULL,
          "a missing file must fail naming it, got: %s", err);
    err[0] = '\0';
    CHECK(ipfib_fib_open(argv[1], "no-such-engine", err, sizeof err) == NULL &&
              strstr(err, "no-such-engine") != NULL,
          "a bad engine name must fail naming it, got: %s", err);
    CHECK(ipfib_fib_open(NULL, NULL, err, sizeof err) == NULL, "a NULL path must fail");
    CHECK(ipfib_fib_open("/nonexistent", NULL, NULL, 0) == NULL, "err may be NULL");
    char tiny[8];
    CHECK(ipfib_fib_open("/nonexistent/x", NULL, tiny, sizeof tiny) == NULL &&
              strlen(tiny) == sizeof tiny - 1,
          "a short err buffer gets a truncated, terminated message");

    /* A corrupt saved table: one byte of the body flipped. */
    FILE *f = fopen(saved, "rb");
    CHECK(f != NULL, "read back %s", saved);
    if (f != NULL) {
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc((size_t)len);
        CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len, "read %s", saved);
        fclose(f);
        buf[len / 2] ^= 0x40;
        FILE *g = fopen(corrupt, "wb");
        fwrite(buf, 1, (size_t)len, g);
        fclose(g);
        free(buf);
        err[0] = '\0';
        CHECK(ipfib_fib_open(corrupt, NULL, err, sizeof err) == NULL && strstr(err, "damaged"),
              "a corrupt saved table must fail saying so, got: %s", err);
    }
    remove(saved);
    remove(corrupt);

    return finish("tables opened from files: single and bulk lookups, save, errors");
}
