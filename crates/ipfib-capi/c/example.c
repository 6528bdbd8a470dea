/* ipfib C example: open a table, look up the addresses of a file (one per line), print one
 * answer per line like `ipfib lookup`: the next hop in decimal, or "-" when no route matches.
 *
 *   example TABLE ADDRESSES      (TABLE: text, gzip, bzip2, MRT RIB or a saved table)
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "ipfib.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TABLE ADDRESSES\n", argv[0]);
        return 2;
    }
    char err[512];
    ipfib_fib *fib = ipfib_fib_open(argv[1], NULL, err, sizeof err);
    if (fib == NULL) {
        fprintf(stderr, "example: %s\n", err);
        return 1;
    }
    FILE *in = fopen(argv[2], "r");
    if (in == NULL) {
        perror(argv[2]);
        ipfib_fib_free(fib);
        return 1;
    }
    char line[128];
    unsigned long n = 0;
    int status = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        n++;
        line[strcspn(line, " \t\r\n")] = '\0';
        uint32_t hop;
        int found;
        struct in_addr v4;
        struct in6_addr v6;
        if (inet_pton(AF_INET, line, &v4) == 1) {
            found = ipfib_lookup_v4(fib, ntohl(v4.s_addr), &hop);
        } else if (inet_pton(AF_INET6, line, &v6) == 1) {
            found = ipfib_lookup_v6(fib, v6.s6_addr, &hop);
        } else {
            fprintf(stderr, "example: %s:%lu: not an address: %s\n", argv[2], n, line);
            status = 1;
            break;
        }
        if (found) {
            printf("%u\n", hop);
        } else {
            printf("-\n");
        }
    }
    fclose(in);
    ipfib_fib_free(fib);
    return status;
}
