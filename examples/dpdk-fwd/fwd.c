/* The forwarding loop, l3fwd-like, on one lcore:
 *
 *   RX burst (32) -> parse Ethernet -> IPv4 / IPv6 destination (others: "non-IP")
 *   -> ONE bulk lookup per family per burst (timed with rte_rdtsc)
 *   -> next hop -> output port (next_hop % ports) or "no route" -> TX
 *
 * pcap source: routed packets go to the null port's TX (which frees them), "no route" and
 * non-IP ones are freed. Ring source: every packet goes back into the ring (else the ring
 * would empty), the "no route" ones counted as drops all the same. Packets TX refuses are
 * freed and counted (tx_dropped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "fwd.h"

#define PREFETCH_OFFSET 4
#define ETH_IPV4_DST (sizeof(struct rte_ether_hdr) + offsetof(struct rte_ipv4_hdr, dst_addr))
#define ETH_IPV6_DST (sizeof(struct rte_ether_hdr) + offsetof(struct rte_ipv6_hdr, dst_addr))

/* a % d for 32-bit a without a division (Lemire, Kaser, Kurz: "Faster remainder by direct
 * computation"); magic = UINT64_MAX / d + 1. */
static inline uint32_t fastmod(uint32_t a, uint64_t magic, uint32_t d)
{
	uint64_t low = magic * a;
	return (uint32_t)(((unsigned __int128)low * d) >> 64);
}

static void add_second(struct fwd *f, const struct second *s)
{
	if (f->nseconds == f->cap_seconds) {
		unsigned cap = f->cap_seconds ? 2 * f->cap_seconds : 64;
		struct second *n = realloc(f->per_second, cap * sizeof(*n));
		if (n == NULL)
			return; /* the overall figures stay right; the median loses a second */
		f->per_second = n;
		f->cap_seconds = cap;
	}
	f->per_second[f->nseconds++] = *s;
}

static inline __attribute__((always_inline)) void
loop(struct fwd *f, struct record *rec, uint64_t nrec, const int recording)
{
	struct rte_mbuf *pkts[BURST], *tx[BURST], *drop[BURST];
	uint32_t ip4[BURST], nh4[BURST], nh6[BURST], nhp[BURST];
	uint8_t ip6[BURST][16] __attribute__((aligned(16)));
	uint8_t idx4[BURST], idx6[BURST];
	uint16_t port[BURST];

	const uint16_t rxp = f->ports->rx_port, txp = f->ports->tx_port;
	const int ring = f->ports->kind == SOURCE_RING;
	const lookup4_fn lk4 = f->lpm->lookup4;
	const lookup6_fn lk6 = f->lpm->lookup6;
	void *const ctx = f->lpm->ctx;
	const uint32_t nports = f->nports;
	const uint64_t magic = f->nports_magic;
	const uint64_t hz = f->tsc_hz;
	struct counters *c = &f->c;
	uint64_t recorded = 0;

	uint64_t now = rte_rdtsc();
	const uint64_t end = now + (uint64_t)(f->seconds * (double)hz);
	uint64_t next_tick = now + hz;
	uint64_t last_tsc = now, last_packets = c->packets, last_lookup = c->lookup_cycles,
		 last_no_route = c->no_route;
	int told_replay = 0;
	if (!recording) {
		f->start_tsc = now;
		f->replay_end_tsc = 0;
	}

	for (;;) {
		const uint16_t nb = rte_eth_rx_burst(rxp, 0, pkts, BURST);
		if (nb == 0) {
			now = rte_rdtsc();
			goto check;
		}
		unsigned n4 = 0, n6 = 0;
		for (unsigned i = 0; i < PREFETCH_OFFSET && i < nb; i++)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
		for (unsigned i = 0; i < nb; i++) {
			if (i + PREFETCH_OFFSET < nb)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_OFFSET], void *));
			const struct rte_mbuf *m = pkts[i];
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
			const uint16_t type = ((const struct rte_ether_hdr *)d)->ether_type;
			if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4) && m->data_len >= ETH_IPV4_DST + 4) {
				uint32_t be;
				memcpy(&be, d + ETH_IPV4_DST, 4);
				ip4[n4] = rte_be_to_cpu_32(be);
				idx4[n4++] = (uint8_t)i;
			} else if (type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
				   m->data_len >= ETH_IPV6_DST + 16) {
				rte_mov16(ip6[n6], d + ETH_IPV6_DST);
				idx6[n6++] = (uint8_t)i;
			} else {
				port[i] = PORT_NON_IP;
				if (recording)
					nhp[i] = NH_MISS;
			}
		}

		const uint64_t t0 = rte_rdtsc();
		if (n4)
			lk4(ctx, ip4, nh4, n4);
		if (n6)
			lk6(ctx, ip6, nh6, n6);
		now = rte_rdtsc();
		c->lookup_cycles += now - t0;

		for (unsigned j = 0; j < n4; j++) {
			const uint32_t h = nh4[j];
			port[idx4[j]] = h == NH_MISS ? PORT_NO_ROUTE : (uint16_t)fastmod(h, magic, nports);
			if (recording)
				nhp[idx4[j]] = h;
		}
		for (unsigned j = 0; j < n6; j++) {
			const uint32_t h = nh6[j];
			port[idx6[j]] = h == NH_MISS ? PORT_NO_ROUTE : (uint16_t)fastmod(h, magic, nports);
			if (recording)
				nhp[idx6[j]] = h;
		}
		c->ipv4 += n4;
		c->ipv6 += n6;

		unsigned ntx = 0, ndrop = 0;
		for (unsigned i = 0; i < nb; i++) {
			const uint16_t p = port[i];
			if (p < nports) {
				c->port[p]++;
				tx[ntx++] = pkts[i];
				continue;
			}
			if (p == PORT_NO_ROUTE)
				c->no_route++;
			else
				c->non_ip++;
			if (ring)
				tx[ntx++] = pkts[i];
			else
				drop[ndrop++] = pkts[i];
		}

		if (recording) {
			for (unsigned i = 0; i < nb && recorded < nrec; i++) {
				struct record *r = &rec[recorded++];
				const uint8_t *d = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
				memset(r, 0, sizeof(*r));
				r->port = port[i];
				r->next_hop = nhp[i];
				if (port[i] == PORT_NON_IP) {
					r->family = 0;
				} else if (((const struct rte_ether_hdr *)d)->ether_type ==
					   RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
					r->family = 4;
					memcpy(r->addr, d + ETH_IPV4_DST, 4);
				} else {
					r->family = 6;
					memcpy(r->addr, d + ETH_IPV6_DST, 16);
				}
			}
		}

		const uint16_t sent = rte_eth_tx_burst(txp, 0, tx, (uint16_t)ntx);
		c->tx += sent;
		if (sent < ntx) {
			c->tx_dropped += ntx - sent;
			rte_pktmbuf_free_bulk(tx + sent, ntx - sent);
		}
		if (ndrop)
			rte_pktmbuf_free_bulk(drop, ndrop);
		c->packets += nb;

	check:
		if (recording) {
			if (recorded >= nrec || *f->stop)
				break;
			continue;
		}
		if (f->replay_running != NULL && f->replay_end_tsc == 0 && !*f->replay_running) {
			f->replay_end_tsc = now;
			f->packets_at_replay_end = c->packets;
		}
		if (now < next_tick && now < end)
			continue;
		if (now >= next_tick) {
			const uint64_t dp = c->packets - last_packets, dt = now - last_tsc;
			struct second s;
			s.mpps = dt ? (double)dp * (double)hz / (double)dt / 1e6 : 0;
			s.lookup_cpp = dp ? (double)(c->lookup_cycles - last_lookup) / (double)dp : 0;
			s.total_cpp = dp ? (double)dt / (double)dp : 0;
			s.no_route = c->no_route - last_no_route;
			s.replay = f->replay_running != NULL && *f->replay_running;
			add_second(f, &s);
			if (!f->quiet) {
				printf("t=%us  Mpps %.2f  lookup cyc/pkt %.1f  total cyc/pkt %.1f  "
				       "drops(no route) %llu%s\n",
				       f->nseconds, s.mpps, s.lookup_cpp, s.total_cpp,
				       (unsigned long long)s.no_route, s.replay ? "  [replay]" : "");
				fflush(stdout);
			}
			last_tsc = now;
			last_packets = c->packets;
			last_lookup = c->lookup_cycles;
			last_no_route = c->no_route;
			next_tick += hz;
			if (next_tick <= now) /* stalled (preempted?): skip whole seconds */
				next_tick = now + hz;
		}
		if (*f->stop)
			break;
		if (now >= end) {
			if (f->replay_running == NULL || f->replay_end_tsc != 0)
				break;
			if (!told_replay && !f->quiet) {
				printf("(the replay is still running: forwarding on until it is over)\n");
				fflush(stdout);
			}
			told_replay = 1;
		}
	}
	if (!recording)
		f->end_tsc = now;
}

void fwd_run(struct fwd *f)
{
	loop(f, NULL, 0, 0);
}

void fwd_verify(struct fwd *f, struct record *rec, uint64_t n)
{
	loop(f, rec, n, 1);
}
