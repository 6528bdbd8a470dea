/* dpdk-fwd: an l3fwd-like RX -> lookup -> TX loop comparing ipfib with DPDK's LPMs.
 *
 * Files: main.c (arguments, control thread, report, verification), fwd.c (the forwarding
 * loop), lpm.c (the three back-ends behind one small vtable), ports.c (pcap files, mempool,
 * ports). */
#ifndef DPDK_FWD_H
#define DPDK_FWD_H

#include <stddef.h>
#include <stdint.h>

#include <ipfib.h>

struct rte_mempool;

#define BURST 32
#define MAX_PORTS 64
/* A lookup's "no route" answer. Tables whose routes use this next hop are refused (main.c). */
#define NH_MISS UINT32_MAX
/* Output "ports" beyond the real ones, as recorded for verification. */
#define PORT_NO_ROUTE 0xfffe
#define PORT_NON_IP 0xffff

/* ---- lpm.c: one back-end, both families ---------------------------------------------- */

/* Bulk lookups of up to BURST addresses: nh[i] = the next hop of ips[i], or NH_MISS.
 * IPv4 addresses in host byte order, IPv6 as 16 bytes in network order. */
typedef void (*lookup4_fn)(void *ctx, const uint32_t *ips, uint32_t *nh, unsigned n);
typedef void (*lookup6_fn)(void *ctx, uint8_t (*ips)[16], uint32_t *nh, unsigned n);

struct lpm {
	const char *name;     /* "ipfib", "rte_fib", "rte_lpm" */
	lookup4_fn lookup4;
	lookup6_fn lookup6;
	void *ctx;
	char desc[512];       /* how it was built (sizes, entry widths, lookup functions) */
	uint64_t routes4, routes6;
};

/* Builds `kind` ("ipfib", "rte_fib", "rte_lpm") from `table`. For ipfib: `live` != NULL makes
 * the back-end look up through a reader of that live table, else a table built with `engine`.
 * Returns 0, or -1 with a message in err. */
int lpm_build(struct lpm *l, const char *kind, const ipfib_table *table, const char *engine,
	      ipfib_live *live, char *err, size_t errlen);
void lpm_free(struct lpm *l);

/* ---- ports.c: packets and ports ------------------------------------------------------ */

struct pcap_info {
	uint64_t packets;   /* records in the file */
	uint32_t max_len;   /* longest captured frame */
	int swapped;        /* byte order differs from ours */
};

/* Reads a pcap file's header and record headers (Ethernet link type only). 0 or -1 + err. */
int pcap_scan(const char *path, struct pcap_info *info, char *err, size_t errlen);

enum source_kind { SOURCE_PCAP, SOURCE_RING };

struct ports {
	enum source_kind kind;
	uint16_t rx_port, tx_port;
	int rx_started, tx_started;
	int have_rx, have_tx;
	char rx_vdev[64], tx_vdev[64]; /* vdevs this program added ("" for none) */
	struct rte_mempool *pool;
	struct rte_ring *ring;         /* ring source only */
	uint64_t pool_size;            /* mbufs */
	uint32_t ring_packets;         /* ring source: mbufs circulating */
	uint32_t ring_size;
};

/* Creates the mempool and ports for the source; the ring source preloads `ring_packets`
 * packets (the first ones of the pcap). 0, or -1 + err (what is set up is torn down by
 * ports_close, which is always safe to call). */
int ports_open(struct ports *p, enum source_kind kind, const char *pcap_path,
	       const struct pcap_info *info, uint32_t ring_packets, char *err, size_t errlen);
void ports_close(struct ports *p);

/* ---- fwd.c: the loop ----------------------------------------------------------------- */

/* One verification record: what the loop decided for one packet. */
struct record {
	uint8_t family;      /* 4, 6, or 0 (not IP) */
	uint16_t port;       /* output port, PORT_NO_ROUTE or PORT_NON_IP */
	uint32_t next_hop;   /* NH_MISS for no route */
	uint8_t addr[16];    /* IPv4: 4 bytes in network order */
};

struct counters {
	uint64_t packets;    /* received and processed */
	uint64_t ipv4, ipv6;
	uint64_t no_route;   /* IP packets without a route */
	uint64_t non_ip;
	uint64_t tx;         /* accepted by TX */
	uint64_t tx_dropped; /* refused by TX (freed by the program) */
	uint64_t lookup_cycles;
	uint64_t port[MAX_PORTS];
};

struct second {
	double mpps, lookup_cpp, total_cpp;
	uint64_t no_route;
	int replay; /* the replay was running at the end of this second */
};

struct fwd {
	/* set up by main */
	struct lpm *lpm;
	struct ports *ports;
	unsigned nports;
	uint64_t nports_magic; /* for the fast modulo */
	double seconds;
	uint64_t tsc_hz;
	volatile int *stop;             /* SIGINT */
	volatile int *replay_running;   /* NULL without --updates; 0 once the replay is over */
	int quiet;
	/* results */
	struct counters c;
	uint64_t start_tsc, end_tsc;
	uint64_t replay_end_tsc;        /* when the loop saw the replay over (0: never) */
	uint64_t packets_at_replay_end;
	struct second *per_second;
	unsigned nseconds, cap_seconds;
};

/* Forwards for f->seconds (and, with a replay, at least until it is over). */
void fwd_run(struct fwd *f);
/* Forwards until `n` packets are recorded into rec (counters keep counting). */
void fwd_verify(struct fwd *f, struct record *rec, uint64_t n);

#endif /* DPDK_FWD_H */
