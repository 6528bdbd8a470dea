/* Packets and ports, without NICs.
 *
 *   pcap source: the program adds a pcap vdev reading the file in a loop
 *                (net_pcap_dpdkfwd, rx_pcap=FILE,infinite_rx=1: the PMD loads every packet into
 *                mbufs once, then copies each into a fresh mbuf on RX, as a NIC's DMA would) and
 *                a net_null vdev (net_null_dpdkfwd) that TX frees packets into.
 *   ring source: an rte_ring made a port with rte_eth_from_ring (RX and TX on the same ring),
 *                preloaded with mbufs holding the pcap's first packets: TX feeds the next RX,
 *                no copies.
 *
 * The pcap file is plain libpcap format, read here (24-byte file header, 16-byte record
 * headers): no libpcap needed by the program itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "fwd.h"

#define RX_DESC 1024
#define TX_DESC 1024
#define POOL_CACHE 256
#define MAX_FRAME 16384

static uint32_t sw32(uint32_t v, int swapped)
{
	return swapped ? __builtin_bswap32(v) : v;
}

/* Opens the file and reads its header. NULL + err on failure. */
static FILE *pcap_open(const char *path, int *swapped, char *err, size_t errlen)
{
	uint32_t h[6];
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err, errlen, "--pcap %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fread(h, sizeof(h), 1, f) != 1) {
		snprintf(err, errlen, "--pcap %s: shorter than a pcap file header (24 bytes)", path);
		fclose(f);
		return NULL;
	}
	if (h[0] == 0xa1b2c3d4u || h[0] == 0xa1b23c4du) {
		*swapped = 0;
	} else if (h[0] == 0xd4c3b2a1u || h[0] == 0x4d3cb2a1u) {
		*swapped = 1;
	} else {
		snprintf(err, errlen, "--pcap %s: not a pcap file (magic 0x%08x; pcapng is not read)",
			 path, h[0]);
		fclose(f);
		return NULL;
	}
	uint32_t link = sw32(h[5], *swapped) & 0x0fffffff;
	if (link != 1) {
		snprintf(err, errlen, "--pcap %s: link type %u, not Ethernet (1)", path, link);
		fclose(f);
		return NULL;
	}
	return f;
}

/* Reads the next record header; 1 = a record, 0 = end, -1 = error. */
static int pcap_next(FILE *f, int swapped, uint32_t *len, const char *path, uint64_t index,
		     char *err, size_t errlen)
{
	uint32_t r[4];
	size_t got = fread(r, 1, sizeof(r), f);
	if (got == 0)
		return 0;
	if (got != sizeof(r)) {
		snprintf(err, errlen, "--pcap %s: record %llu: truncated header", path,
			 (unsigned long long)index);
		return -1;
	}
	*len = sw32(r[2], swapped);
	if (*len > MAX_FRAME) {
		snprintf(err, errlen, "--pcap %s: record %llu: %u bytes (at most %d are read)", path,
			 (unsigned long long)index, *len, MAX_FRAME);
		return -1;
	}
	return 1;
}

int pcap_scan(const char *path, struct pcap_info *info, char *err, size_t errlen)
{
	uint32_t len;
	int ret;
	memset(info, 0, sizeof(*info));
	FILE *f = pcap_open(path, &info->swapped, err, errlen);
	if (f == NULL)
		return -1;
	while ((ret = pcap_next(f, info->swapped, &len, path, info->packets, err, errlen)) == 1) {
		if (fseek(f, len, SEEK_CUR) != 0) {
			snprintf(err, errlen, "--pcap %s: record %llu: %s", path,
				 (unsigned long long)info->packets, strerror(errno));
			ret = -1;
			break;
		}
		if (len > info->max_len)
			info->max_len = len;
		info->packets++;
	}
	/* fseek past the end succeeds: check the last record was whole */
	if (ret == 0) {
		long pos = ftell(f);
		if (fseek(f, 0, SEEK_END) == 0 && ftell(f) < pos) {
			snprintf(err, errlen, "--pcap %s: the last record is truncated", path);
			ret = -1;
		}
	}
	fclose(f);
	if (ret < 0)
		return -1;
	if (info->packets == 0) {
		snprintf(err, errlen, "--pcap %s: no packets", path);
		return -1;
	}
	return 0;
}

/* Fills `n` mbufs with the first n packets of the file. */
static int pcap_load(const char *path, struct rte_mbuf **m, uint32_t n, char *err, size_t errlen)
{
	int swapped;
	uint32_t len;
	FILE *f = pcap_open(path, &swapped, err, errlen);
	if (f == NULL)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (pcap_next(f, swapped, &len, path, i, err, errlen) != 1) {
			if (err[0] == '\0')
				snprintf(err, errlen, "--pcap %s: fewer packets than expected", path);
			fclose(f);
			return -1;
		}
		char *d = rte_pktmbuf_append(m[i], (uint16_t)len);
		if (d == NULL || fread(d, 1, len, f) != len) {
			snprintf(err, errlen, "--pcap %s: record %u: %s", path, i,
				 d == NULL ? "does not fit an mbuf" : "truncated");
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static int port_setup(uint16_t port, struct rte_mempool *pool, const char *what, char *err,
		      size_t errlen)
{
	struct rte_eth_conf conf;
	int ret, socket = rte_eth_dev_socket_id(port);
	uint16_t rxd = RX_DESC, txd = TX_DESC;
	memset(&conf, 0, sizeof(conf));
	if (socket < 0)
		socket = (int)rte_socket_id();
	if ((ret = rte_eth_dev_configure(port, 1, 1, &conf)) < 0) {
		snprintf(err, errlen, "%s: rte_eth_dev_configure(port %u): %s", what, port,
			 rte_strerror(-ret));
		return -1;
	}
	if ((ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd)) < 0) {
		snprintf(err, errlen, "%s: rte_eth_dev_adjust_nb_rx_tx_desc(port %u): %s", what, port,
			 rte_strerror(-ret));
		return -1;
	}
	if ((ret = rte_eth_rx_queue_setup(port, 0, rxd, (unsigned)socket, NULL, pool)) < 0) {
		snprintf(err, errlen, "%s: rte_eth_rx_queue_setup(port %u): %s", what, port,
			 rte_strerror(-ret));
		return -1;
	}
	if ((ret = rte_eth_tx_queue_setup(port, 0, txd, (unsigned)socket, NULL)) < 0) {
		snprintf(err, errlen, "%s: rte_eth_tx_queue_setup(port %u): %s", what, port,
			 rte_strerror(-ret));
		return -1;
	}
	if ((ret = rte_eth_dev_start(port)) < 0) {
		snprintf(err, errlen, "%s: rte_eth_dev_start(port %u): %s", what, port,
			 rte_strerror(-ret));
		return -1;
	}
	return 0;
}

static int add_vdev(const char *name, const char *args, uint16_t *port, char *err, size_t errlen)
{
	int ret = rte_vdev_init(name, args);
	if (ret < 0) {
		snprintf(err, errlen, "rte_vdev_init(%s, \"%s\"): %s (is the PMD installed? DPDK "
			 "loads it from its driver directory)", name, args, rte_strerror(-ret));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, port) != 0) {
		snprintf(err, errlen, "vdev %s created no ethdev port", name);
		return -1;
	}
	return 0;
}

static uint32_t pow2_at_least(uint64_t v)
{
	uint32_t p = 1;
	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

int ports_open(struct ports *p, enum source_kind kind, const char *pcap_path,
	       const struct pcap_info *info, uint32_t ring_packets, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	err[0] = '\0';

	uint32_t room = (info->max_len + 63) / 64 * 64;
	if (room < 64)
		room = 64;
	room += RTE_PKTMBUF_HEADROOM;
	uint64_t margin = 4096 + (uint64_t)rte_lcore_count() * POOL_CACHE * 2;
	if (kind == SOURCE_PCAP) {
		/* the PMD holds every packet of the file in an mbuf (infinite_rx), plus those in
		 * flight */
		p->pool_size = info->packets + margin;
	} else {
		p->ring_packets = ring_packets < info->packets ? ring_packets : (uint32_t)info->packets;
		p->ring_size = pow2_at_least(2 * (uint64_t)p->ring_packets);
		if (p->ring_size < 1024)
			p->ring_size = 1024;
		p->pool_size = p->ring_packets + margin;
	}
	if (p->pool_size > UINT32_MAX / 2) {
		snprintf(err, errlen, "%llu mbufs: too many (use a smaller pcap)",
			 (unsigned long long)p->pool_size);
		return -1;
	}
	p->pool = rte_pktmbuf_pool_create("dpdkfwd_pool", (unsigned)p->pool_size, POOL_CACHE, 0,
					  (uint16_t)room, (int)rte_socket_id());
	if (p->pool == NULL) {
		double mb = (double)p->pool_size * (sizeof(struct rte_mbuf) + room + 64) / 1048576.0;
		snprintf(err, errlen, "rte_pktmbuf_pool_create(%llu mbufs of %u data bytes, ~%.0f MB) "
			 "failed: %s; give the EAL more memory (-m) or use %s",
			 (unsigned long long)p->pool_size, room, mb, rte_strerror(rte_errno),
			 kind == SOURCE_PCAP ? "a pcap with fewer packets" : "fewer --ring-packets");
		return -1;
	}

	if (kind == SOURCE_PCAP) {
		char args[4200];
		if (strchr(pcap_path, ',') != NULL || strlen(pcap_path) > 4000) {
			snprintf(err, errlen, "--pcap %s: the pcap PMD cannot take a path with a comma "
				 "(or this long)", pcap_path);
			return -1;
		}
		snprintf(args, sizeof(args), "rx_pcap=%s,infinite_rx=1", pcap_path);
		snprintf(p->rx_vdev, sizeof(p->rx_vdev), "net_pcap_dpdkfwd");
		if (add_vdev(p->rx_vdev, args, &p->rx_port, err, errlen) != 0) {
			p->rx_vdev[0] = '\0';
			return -1;
		}
		p->have_rx = 1;
		snprintf(p->tx_vdev, sizeof(p->tx_vdev), "net_null_dpdkfwd");
		if (add_vdev(p->tx_vdev, "", &p->tx_port, err, errlen) != 0) {
			p->tx_vdev[0] = '\0';
			return -1;
		}
		p->have_tx = 1;
		/* the pcap PMD reads the whole file into the pool at RX queue setup */
		if (port_setup(p->rx_port, p->pool, "pcap RX port", err, errlen) != 0)
			return -1;
		p->rx_started = 1;
		if (port_setup(p->tx_port, p->pool, "null TX port", err, errlen) != 0)
			return -1;
		p->tx_started = 1;
		return 0;
	}

	p->ring = rte_ring_create("dpdkfwd_ring", p->ring_size, (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (p->ring == NULL) {
		snprintf(err, errlen, "rte_ring_create(%u entries): %s", p->ring_size,
			 rte_strerror(rte_errno));
		return -1;
	}
	int port = rte_eth_from_ring(p->ring);
	if (port < 0) {
		snprintf(err, errlen, "rte_eth_from_ring: %s", rte_strerror(rte_errno));
		return -1;
	}
	p->rx_port = p->tx_port = (uint16_t)port;
	p->have_rx = 1;
	if (port_setup(p->rx_port, p->pool, "ring port", err, errlen) != 0)
		return -1;
	p->rx_started = 1;

	struct rte_mbuf **m = calloc(p->ring_packets, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rte_pktmbuf_alloc_bulk(p->pool, m, p->ring_packets) != 0) {
		snprintf(err, errlen, "cannot allocate %u mbufs for the ring", p->ring_packets);
		free(m);
		return -1;
	}
	if (pcap_load(pcap_path, m, p->ring_packets, err, errlen) != 0 ||
	    rte_ring_enqueue_bulk(p->ring, (void *const *)m, p->ring_packets, NULL) !=
		    p->ring_packets) {
		if (err[0] == '\0')
			snprintf(err, errlen, "cannot preload the ring");
		rte_pktmbuf_free_bulk(m, p->ring_packets);
		free(m);
		return -1;
	}
	free(m);
	return 0;
}

void ports_close(struct ports *p)
{
	if (p->rx_started)
		rte_eth_dev_stop(p->rx_port);
	if (p->tx_started && p->tx_port != p->rx_port)
		rte_eth_dev_stop(p->tx_port);
	if (p->have_rx)
		rte_eth_dev_close(p->rx_port);
	if (p->have_tx && p->tx_port != p->rx_port)
		rte_eth_dev_close(p->tx_port);
	if (p->rx_vdev[0] != '\0')
		rte_vdev_uninit(p->rx_vdev);
	if (p->tx_vdev[0] != '\0')
		rte_vdev_uninit(p->tx_vdev);
	if (p->ring != NULL) {
		/* the circulating mbufs go back before the pool goes */
		void *m;
		while (rte_ring_dequeue(p->ring, &m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(p->ring);
	}
	if (p->pool != NULL)
		rte_mempool_free(p->pool);
	memset(p, 0, sizeof(*p));
}
