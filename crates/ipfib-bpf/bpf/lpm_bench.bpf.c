// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's BPF LPM trie (BPF_MAP_TYPE_LPM_TRIE) driven the way the kernel's selftest
 * benchmark drives it (tools/testing/selftests/bpf/progs/lpm_trie_bench.c): one XDP program,
 * run through BPF_PROG_TEST_RUN, calls bpf_loop() over a range of slots and does one map
 * operation per slot. Unlike the selftest, which makes its keys from a counter, the keys come
 * from an array map that userspace fills (a trace of addresses or a list of routes), and a
 * lookup can write its answer into a second array so that userspace checks it.
 *
 * Every array is BPF_F_MMAPABLE: userspace writes keys and reads answers through mmap, with
 * no system call per slot.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

/* One slot: a key of either family and a next hop. The first 8 bytes are an IPv4 trie key
 * (prefix length, 4 address bytes), the first 20 an IPv6 one: a slot is passed to the trie as
 * its key as it is. */
struct slot {
	__u32 prefixlen;
	__u8 data[16];
	__u32 next_hop;
};

/* The run's parameters and results, one element written and read by userspace. */
struct ctl {
	__u32 start;  /* first slot */
	__u32 count;  /* slots to process, at most 1 << 23 (bpf_loop's limit) */
	__u32 op;     /* IPFIB_OP_* */
	__u32 family; /* 4 or 6 */
	__u64 hits;   /* out: lookups that found a route, or operations done */
	__s64 err;    /* out: the first failing operation's error, 0 if none */
	__u64 failed; /* out: the slot that failed */
};

enum {
	IPFIB_OP_LOOKUP = 0,  /* look up, count the hits (what is timed) */
	IPFIB_OP_ANSWERS = 1, /* look up, write each answer into `answers` */
	IPFIB_OP_INSERT = 2,  /* insert a new prefix (BPF_NOEXIST) */
	IPFIB_OP_UPDATE = 3,  /* give an existing prefix a next hop (BPF_EXIST) */
	IPFIB_OP_DELETE = 4,  /* delete a prefix */
};

/* An answer's code for "no route": outside the u32 range of next hops. */
#define IPFIB_MISS (1ULL << 32)

/* max_entries of every map is set by userspace before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(key_size, 8);
	__uint(value_size, 4);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
} trie4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(key_size, 20);
	__uint(value_size, 4);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
} trie6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, sizeof(struct slot));
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
} answers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, sizeof(struct ctl));
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
} control SEC(".maps");

struct loop_ctx {
	__u32 start;
	__u32 op;
	__u32 family;
	__u32 pad;
	__u64 hits;
	__s64 err;
	__u64 failed;
};

static void *trie_lookup(__u32 family, struct slot *s)
{
	if (family == 4)
		return bpf_map_lookup_elem(&trie4, s);
	return bpf_map_lookup_elem(&trie6, s);
}

static long trie_update(__u32 family, struct slot *s, __u64 flags)
{
	if (family == 4)
		return bpf_map_update_elem(&trie4, s, &s->next_hop, flags);
	return bpf_map_update_elem(&trie6, s, &s->next_hop, flags);
}

static long trie_delete(__u32 family, struct slot *s)
{
	if (family == 4)
		return bpf_map_delete_elem(&trie4, s);
	return bpf_map_delete_elem(&trie6, s);
}

static int step(__u32 index, struct loop_ctx *c)
{
	__u32 i = c->start + index;
	struct slot *s = bpf_map_lookup_elem(&slots, &i);
	__u32 *nh;
	__u64 *out;
	long err = 0;

	if (!s) {
		c->err = -7; /* -E2BIG: past the slots */
		c->failed = i;
		return 1;
	}
	switch (c->op) {
	case IPFIB_OP_LOOKUP:
		if (trie_lookup(c->family, s))
			c->hits++;
		return 0;
	case IPFIB_OP_ANSWERS:
		nh = trie_lookup(c->family, s);
		out = bpf_map_lookup_elem(&answers, &i);
		if (!out) {
			c->err = -7;
			c->failed = i;
			return 1;
		}
		*out = nh ? *nh : IPFIB_MISS;
		if (nh)
			c->hits++;
		return 0;
	case IPFIB_OP_INSERT:
		err = trie_update(c->family, s, BPF_NOEXIST);
		break;
	case IPFIB_OP_UPDATE:
		err = trie_update(c->family, s, BPF_EXIST);
		break;
	case IPFIB_OP_DELETE:
		err = trie_delete(c->family, s);
		break;
	default:
		err = -22; /* -EINVAL */
	}
	if (err) {
		c->err = err;
		c->failed = i;
		return 1;
	}
	c->hits++;
	return 0;
}

SEC("xdp")
int run_ops(struct xdp_md *xdp)
{
	__u32 zero = 0;
	struct ctl *ctl = bpf_map_lookup_elem(&control, &zero);
	struct loop_ctx c = {};

	if (!ctl)
		return XDP_ABORTED;
	c.start = ctl->start;
	c.op = ctl->op;
	c.family = ctl->family;
	bpf_loop(ctl->count, step, &c, 0);
	ctl->hits = c.hits;
	ctl->err = c.err;
	ctl->failed = c.failed;
	return XDP_PASS;
}
