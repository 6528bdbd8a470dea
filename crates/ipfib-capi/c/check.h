/* What the C tests share: the CHECK macro and the addresses with their expected answers (a
 * file of addresses, one per line, and the answers `ipfib lookup --engine reference` printed
 * for them: a next hop in decimal, or "-" for none). */
#ifndef IPFIB_C_CHECK_H
#define IPFIB_C_CHECK_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
            failures++;                                          \
        }                                                        \
    } while (0)

#define MISS 0xffffffffu
#define MAX 4000000

static uint32_t v4s[MAX], v4_want[MAX];
static uint8_t v6s[MAX][16];
static uint32_t v6_want[MAX];
static size_t n4, n6;

/* Reads the addresses and their expected answers into the arrays above; 0 on success. */
static int load_addresses(const char *addresses, const char *expected) {
    FILE *addrs = fopen(addresses, "r"), *want = fopen(expected, "r");
    if (addrs == NULL || want == NULL) {
        perror("addresses or expected answers");
        return -1;
    }
    char a[128], w[64];
    size_t lines = 0;
    n4 = n6 = 0;
    while (fgets(a, sizeof a, addrs) && fgets(w, sizeof w, want) && n4 < MAX && n6 < MAX) {
        lines++;
        a[strcspn(a, "\r\n")] = '\0';
        uint32_t hop = w[0] == '-' ? MISS : (uint32_t)strtoul(w, NULL, 10);
        struct in_addr v4;
        if (inet_pton(AF_INET, a, &v4) == 1) {
            v4s[n4] = ntohl(v4.s_addr);
            v4_want[n4++] = hop;
        } else if (inet_pton(AF_INET6, a, v6s[n6]) == 1) {
            v6_want[n6++] = hop;
        }
    }
    fclose(addrs);
    fclose(want);
    CHECK(lines > 0 && n4 + n6 == lines, "%zu of %zu address lines parsed", n4 + n6, lines);
    return lines > 0 && n4 + n6 == lines ? 0 : -1;
}

/* The end of a test program: the count of failures, or the success line. */
static int finish(const char *what) {
    if (failures) {
        fprintf(stderr, "C tests (%s): %d failure(s)\n", what, failures);
        return 1;
    }
    printf("C tests (%s): ok (%zu IPv4 and %zu IPv6 addresses)\n", what, n4, n6);
    return 0;
}

#endif
