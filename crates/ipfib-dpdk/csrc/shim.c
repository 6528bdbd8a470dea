/*
 * Thin C shim between ipfib-dpdk's Rust code and DPDK 22.11.
 *
 * Why a shim instead of binding DPDK structs from Rust: the configuration structs contain
 * unions and enums whose layout is a C compiler's business, rte_errno is a per-lcore TLS macro,
 * and rte_lpm_lookup_bulk is a static inline function in a header (it exists in no library).
 * Every function here only forwards; the Rust side owns all policy (sizing, next-hop
 * encoding, error mapping).
 *
 * Errors: functions that create return NULL and leave the DPDK error code in *err (a positive
 * errno value); functions that modify return 0 or a negative errno value, as DPDK does.
 */
/* rte_vect_get_max_simd_bitwidth is still marked experimental in 22.11. */
#define ALLOW_EXPERIMENTAL_API 1
#include <rte_config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_log.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_vect.h>

/* ---- EAL ---------------------------------------------------------------------------------- */

int ipfib_dpdk_eal_init(int argc, char **argv, int *err)
{
	/* DPDK 22.11 on Linux logs to stdout (and syslog) by default; a library must not write
	 * to its host's stdout, so send the log to stderr before the EAL starts. */
	rte_openlog_stream(stderr);
	int ret = rte_eal_init(argc, argv);
	*err = ret < 0 ? rte_errno : 0;
	return ret;
}

const char *ipfib_dpdk_strerror(int errnum)
{
	return rte_strerror(errnum);
}

/* Bytes allocated on and free in all malloc heaps (with --no-huge everything is on one
 * socket, but summing is correct either way). */
void ipfib_dpdk_heap_stats(uint64_t *allocated, uint64_t *free_bytes)
{
	struct rte_malloc_socket_stats st;
	uint64_t alloc = 0, fr = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++) {
		int socket = rte_socket_id_by_idx(i);
		if (socket < 0 || rte_malloc_get_socket_stats(socket, &st) != 0)
			continue;
		alloc += st.heap_allocsz_bytes;
		fr += st.heap_freesz_bytes;
	}
	*allocated = alloc;
	*free_bytes = fr;
}

unsigned int ipfib_dpdk_max_simd_bitwidth(void)
{
	return rte_vect_get_max_simd_bitwidth();
}

/* ---- rte_fib6 (TRIE) ----------------------------------------------------------------------- */

/* nh_bytes is 2, 4 or 8: the Rust side picks the narrowest that holds the table. The default
 * next hop is 0: the Rust side stores next_hop + 1, so 0 is "no route" exactly. Requests the
 * AVX-512 bulk lookup; when DPDK refuses it (no AVX-512F/DQ/BW, or the EAL's SIMD width is
 * below 512) selects the scalar trie lookup explicitly, so *avx512 names the function that
 * answers either way. */
struct rte_fib6 *ipfib_fib6_create(const char *name, uint32_t max_routes, uint32_t num_tbl8,
				   int nh_bytes, int *avx512, int *err)
{
	struct rte_fib6_conf conf;
	struct rte_fib6 *fib;

	memset(&conf, 0, sizeof(conf));
	conf.type = RTE_FIB6_TRIE;
	conf.default_nh = 0;
	conf.max_routes = (int)max_routes;
	conf.rib_ext_sz = 0;
	conf.trie.nh_sz = nh_bytes == 8 ? RTE_FIB6_TRIE_8B
			  : nh_bytes == 4 ? RTE_FIB6_TRIE_4B
					  : RTE_FIB6_TRIE_2B;
	conf.trie.num_tbl8 = num_tbl8;

	fib = rte_fib6_create(name, SOCKET_ID_ANY, &conf);
	if (fib == NULL) {
		*err = rte_errno;
		return NULL;
	}
	*avx512 = rte_fib6_select_lookup(fib, RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512) == 0;
	if (!*avx512)
		rte_fib6_select_lookup(fib, RTE_FIB6_LOOKUP_TRIE_SCALAR);
	*err = 0;
	return fib;
}

int ipfib_fib6_add(struct rte_fib6 *fib, const uint8_t ip[16], uint8_t depth, uint64_t nh)
{
	return rte_fib6_add(fib, ip, depth, nh);
}

/* DPDK only reads ips (its prototype lacks the const). */
int ipfib_fib6_lookup_bulk(struct rte_fib6 *fib, const uint8_t ips[][16], uint64_t *nhs, int n)
{
	return rte_fib6_lookup_bulk(fib, (uint8_t(*)[16])ips, nhs, n);
}

void ipfib_fib6_free(struct rte_fib6 *fib)
{
	rte_fib6_free(fib);
}

/* ---- rte_fib (DIR24_8) --------------------------------------------------------------------- */

/* As ipfib_fib6_create, with nh_bytes 1, 2, 4 or 8; the scalar fallback is the macro-based
 * one, which is also what RTE_FIB_LOOKUP_DEFAULT falls back to. */
struct rte_fib *ipfib_fib4_create(const char *name, uint32_t max_routes, uint32_t num_tbl8,
				  int nh_bytes, int *avx512, int *err)
{
	struct rte_fib_conf conf;
	struct rte_fib *fib;

	memset(&conf, 0, sizeof(conf));
	conf.type = RTE_FIB_DIR24_8;
	conf.default_nh = 0;
	conf.max_routes = (int)max_routes;
	conf.rib_ext_sz = 0;
	conf.dir24_8.nh_sz = nh_bytes == 8 ? RTE_FIB_DIR24_8_8B
			    : nh_bytes == 4 ? RTE_FIB_DIR24_8_4B
			    : nh_bytes == 2 ? RTE_FIB_DIR24_8_2B
					    : RTE_FIB_DIR24_8_1B;
	conf.dir24_8.num_tbl8 = num_tbl8;

	fib = rte_fib_create(name, SOCKET_ID_ANY, &conf);
	if (fib == NULL) {
		*err = rte_errno;
		return NULL;
	}
	*avx512 = rte_fib_select_lookup(fib, RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512) == 0;
	if (!*avx512)
		rte_fib_select_lookup(fib, RTE_FIB_LOOKUP_DIR24_8_SCALAR_MACRO);
	*err = 0;
	return fib;
}

int ipfib_fib4_add(struct rte_fib *fib, uint32_t ip, uint8_t depth, uint64_t nh)
{
	return rte_fib_add(fib, ip, depth, nh);
}

/* DPDK only reads ips (its prototype lacks the const). */
int ipfib_fib4_lookup_bulk(struct rte_fib *fib, const uint32_t *ips, uint64_t *nhs, int n)
{
	return rte_fib_lookup_bulk(fib, (uint32_t *)ips, nhs, n);
}

void ipfib_fib4_free(struct rte_fib *fib)
{
	rte_fib_free(fib);
}

/* ---- rte_lpm ------------------------------------------------------------------------------- */

struct rte_lpm *ipfib_lpm4_create(const char *name, uint32_t max_rules, uint32_t num_tbl8,
				  int *err)
{
	struct rte_lpm_config conf;
	struct rte_lpm *lpm;

	memset(&conf, 0, sizeof(conf));
	conf.max_rules = max_rules;
	conf.number_tbl8s = num_tbl8;
	lpm = rte_lpm_create(name, SOCKET_ID_ANY, &conf);
	*err = lpm == NULL ? rte_errno : 0;
	return lpm;
}

int ipfib_lpm4_add(struct rte_lpm *lpm, uint32_t ip, uint8_t depth, uint32_t nh)
{
	return rte_lpm_add(lpm, ip, depth, nh);
}

/* Returns 1 and sets *nh on a hit, 0 on a miss. */
int ipfib_lpm4_lookup(const struct rte_lpm *lpm, uint32_t ip, uint32_t *nh)
{
	return rte_lpm_lookup((struct rte_lpm *)lpm, ip, nh) == 0;
}

/* nhs[i] has RTE_LPM_LOOKUP_SUCCESS set on a hit; the low 24 bits are the next hop. */
int ipfib_lpm4_lookup_bulk(const struct rte_lpm *lpm, const uint32_t *ips, uint32_t *nhs,
			   unsigned int n)
{
	return rte_lpm_lookup_bulk(lpm, ips, nhs, n);
}

uint32_t ipfib_lpm4_hit_flag(void)
{
	return RTE_LPM_LOOKUP_SUCCESS;
}

void ipfib_lpm4_free(struct rte_lpm *lpm)
{
	rte_lpm_free(lpm);
}

/* ---- rte_lpm6 ------------------------------------------------------------------------------ */

struct rte_lpm6 *ipfib_lpm6_create(const char *name, uint32_t max_rules, uint32_t num_tbl8,
				   int *err)
{
	struct rte_lpm6_config conf;
	struct rte_lpm6 *lpm;

	memset(&conf, 0, sizeof(conf));
	conf.max_rules = max_rules;
	conf.number_tbl8s = num_tbl8;
	lpm = rte_lpm6_create(name, SOCKET_ID_ANY, &conf);
	*err = lpm == NULL ? rte_errno : 0;
	return lpm;
}

int ipfib_lpm6_add(struct rte_lpm6 *lpm, const uint8_t ip[16], uint8_t depth, uint32_t nh)
{
	return rte_lpm6_add(lpm, ip, depth, nh);
}

/* Returns 1 and sets *nh on a hit, 0 on a miss. */
int ipfib_lpm6_lookup(const struct rte_lpm6 *lpm, const uint8_t ip[16], uint32_t *nh)
{
	return rte_lpm6_lookup(lpm, ip, nh) == 0;
}

/* nhs[i] is -1 on a miss. DPDK only reads ips (its prototype lacks the const). */
int ipfib_lpm6_lookup_bulk(const struct rte_lpm6 *lpm, const uint8_t ips[][16], int32_t *nhs,
			   unsigned int n)
{
	return rte_lpm6_lookup_bulk_func(lpm, (uint8_t(*)[16])ips, nhs, n);
}

void ipfib_lpm6_free(struct rte_lpm6 *lpm)
{
	rte_lpm6_free(lpm);
}
