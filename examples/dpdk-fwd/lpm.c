/* The three back-ends behind one vtable: ipfib, rte_fib + rte_fib6, rte_lpm + rte_lpm6.
 *
 * The DPDK structures are configured as this project's Rust bench configures them
 * (crates/ipfib-dpdk/src: sizing.rs, fib4.rs, fib6.rs, lpm4.rs, lpm6.rs), the choices measured
 * best there:
 *   rte_fib   DIR24_8, next hop stored + 1 (default 0 = no route), the narrowest entry (1, 2, 4
 *             or 8 bytes) that holds every next hop + 1 and the tbl8 group count, tbl8 groups =
 *             the /24 blocks holding routes longer than /24 (exact; on ENOSPC once more with
 *             one per long route); AVX-512 lookup if DPDK grants it, else the scalar macro one.
 *   rte_fib6  TRIE, the same encoding, 2/4/8-byte entries, tbl8 groups = what rte_fib6_add
 *             reserves for the routes in table order (replayed below; on ENOSPC the bound).
 *   rte_lpm   max_rules = routes, tbl8 groups as rte_fib; a /0 becomes its two /1 halves (rte_lpm
 *             takes depths 1..32) unless the table has them; looked up 4 at a time with
 *             rte_lpm_lookupx4 as l3fwd does, the remainder one by one.
 *   rte_lpm6  max_rules = routes (at least 8), tbl8 groups = the distinct 8-bit levels below
 *             /24 the routes reach into (on ENOSPC: 2 x routes and the bound); /0 as rte_lpm.
 */
/* rte_vect_set_max_simd_bitwidth is still experimental in 22.11. */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_memory.h>
#include <rte_vect.h>

#include "fwd.h"

typedef unsigned __int128 u128;

#define LPM4_MAX_NH ((1u << 24) - 1)
#define LPM6_MAX_NH ((1u << 21) - 1)

/* ---- routes of one family ------------------------------------------------------------- */

struct routes {
	ipfib_route *r4, *r6; /* views into all */
	size_t n4, n6;
	ipfib_route *all;
	uint32_t max_nh4, max_nh6;
};

static int routes_get(struct routes *rs, const ipfib_table *t, char *err, size_t errlen)
{
	memset(rs, 0, sizeof(*rs));
	size_t n = ipfib_table_routes(t, NULL, 0);
	rs->all = calloc(n ? n : 1, sizeof(ipfib_route));
	if (rs->all == NULL) {
		snprintf(err, errlen, "out of memory for %zu routes", n);
		return -1;
	}
	ipfib_table_routes(t, rs->all, n);
	for (size_t k = 0; k < n; k++)
		if (rs->all[k].next_hop == NH_MISS) {
			snprintf(err, errlen, "a route has next hop %u, which this program uses for "
				 "\"no route\"", NH_MISS);
			free(rs->all);
			rs->all = NULL;
			return -1;
		}
	size_t i = 0;
	while (i < n && rs->all[i].family == 4) {
		if (rs->all[i].next_hop > rs->max_nh4)
			rs->max_nh4 = rs->all[i].next_hop;
		i++;
	}
	rs->r4 = rs->all;
	rs->n4 = i;
	rs->r6 = rs->all + i;
	rs->n6 = n - i;
	for (; i < n; i++)
		if (rs->all[i].next_hop > rs->max_nh6)
			rs->max_nh6 = rs->all[i].next_hop;
	return 0;
}

static u128 v6_of(const uint8_t b[16])
{
	u128 v = 0;
	for (int i = 0; i < 16; i++)
		v = (v << 8) | b[i];
	return v;
}

static u128 mask6(unsigned depth)
{
	return depth == 0 ? 0 : ~(u128)0 << (128 - depth);
}

static int contains6(u128 addr, unsigned depth, u128 x)
{
	return ((addr ^ x) & mask6(depth)) == 0;
}

/* ---- sizing (crates/ipfib-dpdk/src/sizing.rs) ----------------------------------------- */

/* /24 blocks holding a route longer than /24: in address order such routes of one block are
 * adjacent. */
static uint64_t ipv4_tbl8_groups(const ipfib_route *r, size_t n)
{
	uint64_t groups = 0;
	uint32_t last = 0;
	int any = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].depth <= 24)
			continue;
		uint32_t block = r[i].v4 >> 8;
		if (!any || block != last)
			groups++;
		last = block;
		any = 1;
	}
	return groups;
}

static uint64_t long_routes(const ipfib_route *r, size_t n)
{
	uint64_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += r[i].depth > 24;
	return k;
}

static unsigned ceil8(unsigned d)
{
	return (d + 7) / 8 * 8;
}

static uint64_t tbl8_bound6(const ipfib_route *r, size_t n);

/* The groups rte_fib6_add reserves for the routes added in table order (sizing.rs
 * fib6_reserved_tbl8_groups): a route longer than /24 with no earlier route strictly inside
 * its floor8 block reserves (ceil8(d) - ceil8(max(parent, 24))) / 8. */
static uint64_t fib6_reserved_tbl8_groups(const ipfib_route *r, size_t n)
{
	size_t *anc = malloc((n + 1) * sizeof(size_t)); /* ancestors: indexes, shortest first */
	size_t top = 0;
	uint64_t reserved = 0;
	if (anc == NULL)
		return tbl8_bound6(r, n);
	for (size_t i = 0; i < n; i++) {
		u128 a = v6_of(r[i].v6);
		while (top > 0 && !contains6(v6_of(r[anc[top - 1]].v6), r[anc[top - 1]].depth, a))
			top--;
		if (r[i].depth > 24) {
			unsigned floor = r[i].depth / 8 * 8;
			int inside = 0;
			for (size_t j = i; j-- > 0;) {
				if (!contains6(a, floor, v6_of(r[j].v6)))
					break;
				if (r[j].depth > floor) {
					inside = 1;
					break;
				}
			}
			if (!inside) {
				unsigned parent = top > 0 ? r[anc[top - 1]].depth : 24;
				if (parent < 24)
					parent = 24;
				reserved += (ceil8(r[i].depth) - ceil8(parent)) / 8;
			}
		}
		anc[top++] = i;
	}
	free(anc);
	return reserved;
}

/* Every route longer than /24 on its own: (ceil8(d) - 24) / 8 groups each. */
static uint64_t tbl8_bound6(const ipfib_route *r, size_t n)
{
	uint64_t b = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].depth > 24)
			b += (ceil8(r[i].depth) - 24) / 8;
	return b;
}

/* rte_lpm6: one group per 8-bit level k = 24, 32, ... below a route's depth, shared by the
 * routes with the same first k bits. In address order the k-bit keys of the routes deeper
 * than k never decrease, so counting changes per level counts distinct keys. */
static uint64_t ipv6_tbl8_groups(const ipfib_route *r, size_t n)
{
	u128 last[16];
	int seen[16] = {0};
	uint64_t groups = 0;
	for (size_t i = 0; i < n; i++) {
		u128 a = v6_of(r[i].v6);
		for (unsigned k = 24, lvl = 0; k < r[i].depth; k += 8, lvl++) {
			u128 key = a >> (128 - k);
			if (!seen[lvl] || key != last[lvl])
				groups++;
			last[lvl] = key;
			seen[lvl] = 1;
		}
	}
	return groups;
}

/* The narrowest rte_fib/rte_fib6 entry (of `sizes`) that holds max_nh + 1 and the group
 * count: one bit of each entry marks a tbl8 entry. */
static unsigned fib_entry_bytes(uint32_t max_nh, uint64_t tbl8, const unsigned *sizes, int k)
{
	uint64_t need = (uint64_t)max_nh + 1;
	if (tbl8 > need)
		need = tbl8;
	for (int i = 0; i < k; i++)
		if (((UINT64_C(1) << (8 * sizes[i] - 1)) - 1) >= need)
			return sizes[i];
	return 8;
}

/* Routes for rte_lpm/rte_lpm6 (depth >= 1): a /0 becomes the /1 halves the table lacks. */
static ipfib_route *without_default(const ipfib_route *r, size_t n, int family, size_t *out_n)
{
	ipfib_route *o = calloc(n + 2, sizeof(ipfib_route));
	size_t k = 0;
	const ipfib_route *def = NULL;
	int have_low = 0, have_high = 0;
	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (r[i].depth == 0) {
			def = &r[i];
			continue;
		}
		if (r[i].depth == 1) {
			int high = family == 4 ? (r[i].v4 >> 31) != 0 : (r[i].v6[0] & 0x80) != 0;
			if (high)
				have_high = 1;
			else
				have_low = 1;
		}
		o[k++] = r[i];
	}
	if (def != NULL) {
		for (int high = 0; high <= 1; high++) {
			if (high ? have_high : have_low)
				continue;
			ipfib_route h = *def;
			h.depth = 1;
			if (family == 4)
				h.v4 = high ? 0x80000000u : 0;
			else
				h.v6[0] = high ? 0x80 : 0;
			o[k++] = h;
		}
	}
	*out_n = k;
	return o;
}

static double mb(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* ---- ipfib ------------------------------------------------------------------------------ */

struct ipfib_ctx {
	ipfib_fib *fib;       /* static table, or */
	ipfib_reader *reader; /* a reader of a live table */
};

static void ipfib_lookup4(void *ctx, const uint32_t *ips, uint32_t *nh, unsigned n)
{
	ipfib_lookup_v4_bulk(((struct ipfib_ctx *)ctx)->fib, ips, nh, n, NH_MISS);
}

static void ipfib_lookup6(void *ctx, uint8_t (*ips)[16], uint32_t *nh, unsigned n)
{
	ipfib_lookup_v6_bulk(((struct ipfib_ctx *)ctx)->fib, (const uint8_t(*)[16])ips, nh, n,
			     NH_MISS);
}

static void live_lookup4(void *ctx, const uint32_t *ips, uint32_t *nh, unsigned n)
{
	ipfib_reader_lookup_v4_bulk(((struct ipfib_ctx *)ctx)->reader, ips, nh, n, NH_MISS);
}

static void live_lookup6(void *ctx, uint8_t (*ips)[16], uint32_t *nh, unsigned n)
{
	ipfib_reader_lookup_v6_bulk(((struct ipfib_ctx *)ctx)->reader, (const uint8_t(*)[16])ips,
				    nh, n, NH_MISS);
}

static int build_ipfib(struct lpm *l, const ipfib_table *t, const char *engine, ipfib_live *live,
		       char *err, size_t errlen)
{
	struct ipfib_ctx *c = calloc(1, sizeof(*c));
	char e[512];
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	l->ctx = c;
	if (live != NULL) {
		c->reader = ipfib_live_reader(live);
		if (c->reader == NULL) {
			snprintf(err, errlen, "ipfib_live_reader failed");
			return -1;
		}
		l->lookup4 = live_lookup4;
		l->lookup6 = live_lookup6;
		snprintf(l->desc, sizeof(l->desc),
			 "ipfib live table (engine %s), looked up through a reader "
			 "(ipfib_reader_lookup_v4_bulk/_v6_bulk)", engine);
	} else {
		c->fib = ipfib_fib_build(t, engine, e, sizeof(e));
		if (c->fib == NULL) {
			snprintf(err, errlen, "ipfib_fib_build(engine %s): %s", engine, e);
			return -1;
		}
		l->lookup4 = ipfib_lookup4;
		l->lookup6 = ipfib_lookup6;
		snprintf(l->desc, sizeof(l->desc),
			 "ipfib engine %s (ipfib_lookup_v4_bulk/_v6_bulk)", engine);
	}
	return 0;
}

/* ---- rte_fib / rte_fib6 ---------------------------------------------------------------- */

struct dpdk_ctx {
	struct rte_fib *fib4;
	struct rte_fib6 *fib6;
	struct rte_lpm *lpm4;
	struct rte_lpm6 *lpm6;
};

static void miss_all(uint32_t *nh, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		nh[i] = NH_MISS;
}

static void fib_lookup4(void *ctx, const uint32_t *ips, uint32_t *nh, unsigned n)
{
	struct dpdk_ctx *c = ctx;
	uint64_t h[BURST];
	if (c->fib4 == NULL) {
		miss_all(nh, n);
		return;
	}
	rte_fib_lookup_bulk(c->fib4, (uint32_t *)(uintptr_t)ips, h, n);
	/* stored next hop + 1; 0 (no route) - 1 is NH_MISS */
	for (unsigned i = 0; i < n; i++)
		nh[i] = (uint32_t)(h[i] - 1);
}

static void fib_lookup6(void *ctx, uint8_t (*ips)[16], uint32_t *nh, unsigned n)
{
	struct dpdk_ctx *c = ctx;
	uint64_t h[BURST];
	if (c->fib6 == NULL) {
		miss_all(nh, n);
		return;
	}
	rte_fib6_lookup_bulk(c->fib6, ips, h, n);
	for (unsigned i = 0; i < n; i++)
		nh[i] = (uint32_t)(h[i] - 1);
}

static int too_many(char *err, size_t errlen, const char *what, uint64_t tbl8)
{
	snprintf(err, errlen, "%s: %llu tbl8 groups needed, more than DPDK takes", what,
		 (unsigned long long)tbl8);
	return -1;
}

static int dpdk_fail(char *err, size_t errlen, const char *what, int code, uint64_t need)
{
	snprintf(err, errlen, "%s failed: %s (needs about %.0f MB of DPDK memory: EAL -m)", what,
		 rte_strerror(code), mb(need));
	return -1;
}

/* rte_fib4: returns 0, -ENOSPC (retry larger) or -1 with err. */
static int fib4_try(struct dpdk_ctx *c, const struct routes *rs, uint64_t tbl8, char *desc,
		    size_t dlen, char *err, size_t errlen)
{
	static const unsigned sizes[] = {1, 2, 4, 8};
	unsigned bytes = fib_entry_bytes(rs->max_nh4, tbl8, sizes, 4);
	uint64_t need = (UINT64_C(1) << 24) * bytes + tbl8 * (256 * bytes + 1) + rs->n4 * 256;
	struct rte_fib_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.type = RTE_FIB_DIR24_8;
	conf.default_nh = 0;
	conf.max_routes = (int)(rs->n4 ? rs->n4 : 1);
	conf.dir24_8.nh_sz = bytes == 8 ? RTE_FIB_DIR24_8_8B
			    : bytes == 4 ? RTE_FIB_DIR24_8_4B
			    : bytes == 2 ? RTE_FIB_DIR24_8_2B
					 : RTE_FIB_DIR24_8_1B;
	conf.dir24_8.num_tbl8 = (uint32_t)(tbl8 ? tbl8 : 1);
	if (tbl8 > UINT32_MAX)
		return too_many(err, errlen, "rte_fib", tbl8);
	c->fib4 = rte_fib_create("dpdkfwd_fib4", SOCKET_ID_ANY, &conf);
	if (c->fib4 == NULL)
		return dpdk_fail(err, errlen, "rte_fib_create", rte_errno, need);
	int avx512 = rte_fib_select_lookup(c->fib4, RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512) == 0;
	if (!avx512)
		rte_fib_select_lookup(c->fib4, RTE_FIB_LOOKUP_DIR24_8_SCALAR_MACRO);
	for (size_t i = 0; i < rs->n4; i++) {
		const ipfib_route *r = &rs->r4[i];
		int ret = rte_fib_add(c->fib4, r->v4, r->depth, (uint64_t)r->next_hop + 1);
		if (ret == -ENOSPC) {
			rte_fib_free(c->fib4);
			c->fib4 = NULL;
			return -ENOSPC;
		}
		if (ret < 0) {
			snprintf(err, errlen, "rte_fib_add(%u.%u.%u.%u/%u) failed: %s", r->v4 >> 24,
				 (r->v4 >> 16) & 255, (r->v4 >> 8) & 255, r->v4 & 255, r->depth,
				 rte_strerror(-ret));
			return -1;
		}
	}
	snprintf(desc, dlen, "rte_fib DIR24_8 %uB entries, %llu tbl8 groups, %s lookup, ~%.0f MB",
		 bytes, (unsigned long long)(tbl8 ? tbl8 : 1), avx512 ? "avx512" : "scalar-macro", mb(need));
	return 0;
}

static int fib6_try(struct dpdk_ctx *c, const struct routes *rs, uint64_t tbl8, char *desc,
		    size_t dlen, char *err, size_t errlen)
{
	static const unsigned sizes[] = {2, 4, 8};
	unsigned bytes = fib_entry_bytes(rs->max_nh6, tbl8, sizes, 3);
	uint64_t need = (UINT64_C(1) << 24) * bytes + tbl8 * (256 * bytes + 4) + rs->n6 * 256;
	struct rte_fib6_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.type = RTE_FIB6_TRIE;
	conf.default_nh = 0;
	conf.max_routes = (int)(rs->n6 ? rs->n6 : 1);
	conf.trie.nh_sz = bytes == 8 ? RTE_FIB6_TRIE_8B
			  : bytes == 4 ? RTE_FIB6_TRIE_4B
				       : RTE_FIB6_TRIE_2B;
	conf.trie.num_tbl8 = (uint32_t)(tbl8 ? tbl8 : 1);
	if (tbl8 > UINT32_MAX)
		return too_many(err, errlen, "rte_fib6", tbl8);
	c->fib6 = rte_fib6_create("dpdkfwd_fib6", SOCKET_ID_ANY, &conf);
	if (c->fib6 == NULL)
		return dpdk_fail(err, errlen, "rte_fib6_create", rte_errno, need);
	int avx512 = rte_fib6_select_lookup(c->fib6, RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512) == 0;
	if (!avx512)
		rte_fib6_select_lookup(c->fib6, RTE_FIB6_LOOKUP_TRIE_SCALAR);
	for (size_t i = 0; i < rs->n6; i++) {
		const ipfib_route *r = &rs->r6[i];
		int ret = rte_fib6_add(c->fib6, r->v6, r->depth, (uint64_t)r->next_hop + 1);
		if (ret == -ENOSPC) {
			rte_fib6_free(c->fib6);
			c->fib6 = NULL;
			return -ENOSPC;
		}
		if (ret < 0) {
			snprintf(err, errlen, "rte_fib6_add(route %zu of the IPv6 routes, /%u) failed: %s",
				 i, r->depth, rte_strerror(-ret));
			return -1;
		}
	}
	snprintf(desc, dlen, "rte_fib6 TRIE %uB entries, %llu tbl8 groups, %s lookup, ~%.0f MB",
		 bytes, (unsigned long long)(tbl8 ? tbl8 : 1), avx512 ? "avx512" : "scalar", mb(need));
	return 0;
}

/* ---- rte_lpm / rte_lpm6 ----------------------------------------------------------------- */

static void lpm_lookup4(void *ctx, const uint32_t *ips, uint32_t *nh, unsigned n)
{
	struct dpdk_ctx *c = ctx;
	unsigned i = 0;
	if (c->lpm4 == NULL) {
		miss_all(nh, n);
		return;
	}
	/* l3fwd's LPM path: 4 at a time with the SSE lookup, the rest one by one. */
	for (; i + 4 <= n; i += 4) {
		xmm_t ip = _mm_loadu_si128((const __m128i *)(const void *)(ips + i));
		rte_lpm_lookupx4(c->lpm4, ip, nh + i, NH_MISS);
	}
	for (; i < n; i++) {
		uint32_t h;
		nh[i] = rte_lpm_lookup(c->lpm4, ips[i], &h) == 0 ? h : NH_MISS;
	}
}

static void lpm_lookup6(void *ctx, uint8_t (*ips)[16], uint32_t *nh, unsigned n)
{
	struct dpdk_ctx *c = ctx;
	int32_t h[BURST];
	if (c->lpm6 == NULL) {
		miss_all(nh, n);
		return;
	}
	rte_lpm6_lookup_bulk_func(c->lpm6, ips, h, n);
	/* -1 (no route) is NH_MISS */
	for (unsigned i = 0; i < n; i++)
		nh[i] = (uint32_t)h[i];
}

static int lpm4_try(struct dpdk_ctx *c, const ipfib_route *r, size_t n, uint64_t tbl8, char *desc,
		    size_t dlen, char *err, size_t errlen)
{
	uint64_t need = (UINT64_C(1) << 24) * 4 + tbl8 * (256 * 4 + 8) + n * 8;
	struct rte_lpm_config conf;
	memset(&conf, 0, sizeof(conf));
	conf.max_rules = (uint32_t)(n ? n : 1);
	conf.number_tbl8s = (uint32_t)(tbl8 ? tbl8 : 1);
	if (tbl8 > UINT32_MAX)
		return too_many(err, errlen, "rte_lpm", tbl8);
	c->lpm4 = rte_lpm_create("dpdkfwd_lpm4", SOCKET_ID_ANY, &conf);
	if (c->lpm4 == NULL)
		return dpdk_fail(err, errlen, "rte_lpm_create", rte_errno, need);
	for (size_t i = 0; i < n; i++) {
		int ret = rte_lpm_add(c->lpm4, r[i].v4, r[i].depth, r[i].next_hop);
		if (ret == -ENOSPC) {
			rte_lpm_free(c->lpm4);
			c->lpm4 = NULL;
			return -ENOSPC;
		}
		if (ret < 0) {
			snprintf(err, errlen, "rte_lpm_add(%u.%u.%u.%u/%u) failed: %s", r[i].v4 >> 24,
				 (r[i].v4 >> 16) & 255, (r[i].v4 >> 8) & 255, r[i].v4 & 255,
				 r[i].depth, rte_strerror(-ret));
			return -1;
		}
	}
	snprintf(desc, dlen, "rte_lpm %zu rules, %llu tbl8 groups, rte_lpm_lookupx4, ~%.0f MB", n,
		 (unsigned long long)(tbl8 ? tbl8 : 1), mb(need));
	return 0;
}

static int lpm6_try(struct dpdk_ctx *c, const ipfib_route *r, size_t n, uint64_t rules,
		    uint64_t tbl8, char *desc, size_t dlen, char *err, size_t errlen)
{
	uint64_t need = (UINT64_C(1) << 24) * 4 + tbl8 * (256 * 4 + 16) + rules * 128;
	struct rte_lpm6_config conf;
	memset(&conf, 0, sizeof(conf));
	conf.max_rules = (uint32_t)rules;
	conf.number_tbl8s = (uint32_t)(tbl8 ? tbl8 : 1);
	if (tbl8 > UINT32_MAX)
		return too_many(err, errlen, "rte_lpm6", tbl8);
	c->lpm6 = rte_lpm6_create("dpdkfwd_lpm6", SOCKET_ID_ANY, &conf);
	if (c->lpm6 == NULL)
		return dpdk_fail(err, errlen, "rte_lpm6_create", rte_errno, need);
	for (size_t i = 0; i < n; i++) {
		int ret = rte_lpm6_add(c->lpm6, r[i].v6, r[i].depth, r[i].next_hop);
		if (ret == -ENOSPC) {
			rte_lpm6_free(c->lpm6);
			c->lpm6 = NULL;
			return -ENOSPC;
		}
		if (ret < 0) {
			snprintf(err, errlen, "rte_lpm6_add(route %zu, /%u) failed: %s", i, r[i].depth,
				 rte_strerror(-ret));
			return -1;
		}
	}
	snprintf(desc, dlen, "rte_lpm6 %llu rules, %llu tbl8 groups, rte_lpm6_lookup_bulk_func, "
		 "~%.0f MB", (unsigned long long)rules, (unsigned long long)(tbl8 ? tbl8 : 1), mb(need));
	return 0;
}

static int build_dpdk(struct lpm *l, int lpm, const struct routes *rs, char *err, size_t errlen)
{
	struct dpdk_ctx *c = calloc(1, sizeof(*c));
	char d4[200] = "no IPv4 routes: every IPv4 packet is 'no route'";
	char d6[200] = "no IPv6 routes: every IPv6 packet is 'no route'";
	int ret;
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	l->ctx = c;
	if (!lpm) {
		l->lookup4 = fib_lookup4;
		l->lookup6 = fib_lookup6;
		if (rs->n4 > 0) {
			uint64_t first = ipv4_tbl8_groups(rs->r4, rs->n4);
			ret = fib4_try(c, rs, first, d4, sizeof(d4), err, errlen);
			if (ret == -ENOSPC)
				ret = fib4_try(c, rs, long_routes(rs->r4, rs->n4), d4, sizeof(d4), err,
					       errlen);
			if (ret == -ENOSPC)
				snprintf(err, errlen, "rte_fib_add: out of tbl8 groups");
			if (ret != 0)
				return -1;
		}
		if (rs->n6 > 0) {
			uint64_t first = fib6_reserved_tbl8_groups(rs->r6, rs->n6);
			ret = fib6_try(c, rs, first, d6, sizeof(d6), err, errlen);
			if (ret == -ENOSPC)
				ret = fib6_try(c, rs, tbl8_bound6(rs->r6, rs->n6), d6, sizeof(d6), err,
					       errlen);
			if (ret == -ENOSPC)
				snprintf(err, errlen, "rte_fib6_add: out of tbl8 groups");
			if (ret != 0)
				return -1;
		}
	} else {
		l->lookup4 = lpm_lookup4;
		l->lookup6 = lpm_lookup6;
		if (rs->max_nh4 > LPM4_MAX_NH || rs->max_nh6 > LPM6_MAX_NH) {
			snprintf(err, errlen, "rte_lpm holds next hops up to %u and rte_lpm6 up to %u; "
				 "the table has %u (IPv4) and %u (IPv6)", LPM4_MAX_NH, LPM6_MAX_NH,
				 rs->max_nh4, rs->max_nh6);
			return -1;
		}
		if (rs->n4 > 0) {
			size_t n;
			ipfib_route *r = without_default(rs->r4, rs->n4, 4, &n);
			if (r == NULL) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			ret = lpm4_try(c, r, n, ipv4_tbl8_groups(r, n), d4, sizeof(d4), err, errlen);
			if (ret == -ENOSPC)
				ret = lpm4_try(c, r, n, long_routes(r, n), d4, sizeof(d4), err, errlen);
			if (ret == -ENOSPC)
				snprintf(err, errlen, "rte_lpm_add: out of tbl8 groups");
			free(r);
			if (ret != 0)
				return -1;
		}
		if (rs->n6 > 0) {
			size_t n;
			ipfib_route *r = without_default(rs->r6, rs->n6, 6, &n);
			if (r == NULL) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			ret = lpm6_try(c, r, n, n < 8 ? 8 : n, ipv6_tbl8_groups(r, n), d6, sizeof(d6),
				       err, errlen);
			if (ret == -ENOSPC)
				ret = lpm6_try(c, r, n, 2 * n < 8 ? 8 : 2 * n, tbl8_bound6(r, n), d6,
					       sizeof(d6), err, errlen);
			if (ret == -ENOSPC)
				snprintf(err, errlen, "rte_lpm6_add: out of rules or tbl8 groups");
			free(r);
			if (ret != 0)
				return -1;
		}
	}
	snprintf(l->desc, sizeof(l->desc), "%s; %s", d4, d6);
	return 0;
}

int lpm_build(struct lpm *l, const char *kind, const ipfib_table *table, const char *engine,
	      ipfib_live *live, char *err, size_t errlen)
{
	struct routes rs;
	int ret;
	memset(l, 0, sizeof(*l));
	if (routes_get(&rs, table, err, errlen) != 0)
		return -1;
	/* As the Rust bench (--force-max-simd-bitwidth=512): let DPDK pick its AVX-512 lookups
	 * where the CPU has them, unless the user set the width with that EAL option (then
	 * this call fails and the user's choice stands). */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	l->routes4 = rs.n4;
	l->routes6 = rs.n6;
	if (strcmp(kind, "ipfib") == 0) {
		l->name = "ipfib";
		ret = build_ipfib(l, table, engine, live, err, errlen);
	} else if (strcmp(kind, "rte_fib") == 0) {
		l->name = "rte_fib";
		ret = build_dpdk(l, 0, &rs, err, errlen);
	} else if (strcmp(kind, "rte_lpm") == 0) {
		l->name = "rte_lpm";
		ret = build_dpdk(l, 1, &rs, err, errlen);
	} else {
		snprintf(err, errlen, "unknown --lpm %s (ipfib, rte_fib or rte_lpm)", kind);
		ret = -1;
	}
	free(rs.all);
	return ret;
}

void lpm_free(struct lpm *l)
{
	if (l->ctx == NULL)
		return;
	if (strcmp(l->name, "ipfib") == 0) {
		struct ipfib_ctx *c = l->ctx;
		ipfib_fib_free(c->fib);
		ipfib_reader_free(c->reader);
	} else {
		struct dpdk_ctx *c = l->ctx;
		if (c->fib4 != NULL)
			rte_fib_free(c->fib4);
		if (c->fib6 != NULL)
			rte_fib6_free(c->fib6);
		if (c->lpm4 != NULL)
			rte_lpm_free(c->lpm4);
		if (c->lpm6 != NULL)
			rte_lpm6_free(c->lpm6);
	}
	free(l->ctx);
	l->ctx = NULL;
}
