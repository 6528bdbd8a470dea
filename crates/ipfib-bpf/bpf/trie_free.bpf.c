// SPDX-License-Identifier: GPL-2.0
/*
 * How long the kernel takes to free a BPF map: the selftest times bpf_map_free_deferred(), the
 * kernel worker function that frees a map (for an LPM trie: trie_free()), with fentry and
 * fexit. This project's test VM refuses tracing programs (EPERM) and has no kprobes, so the
 * same function is timed from the workqueue's raw tracepoints instead: a work item that
 * starts with bpf_map_free_deferred as its function (its address set by userspace from
 * /proc/kallsyms) on a map of type BPF_MAP_TYPE_LPM_TRIE is stamped by its work_struct
 * address, and when it ends its time is added to `freed`. The offsets of the kernel's structs
 * are CO-RE relocations against the kernel's BTF.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* The fields read of the kernel's structs; libbpf relocates their offsets. */
struct work_struct {
	void *func;
} __attribute__((preserve_access_index));

struct bpf_map {
	enum bpf_map_type map_type;
	struct work_struct work;
} __attribute__((preserve_access_index));

char _license[] SEC("license") = "GPL";

struct freed {
	__u64 target_fn; /* in: the address of bpf_map_free_deferred */
	__u64 total_ns;  /* out: time of every LPM trie free seen */
	__u64 count;     /* out: LPM trie frees seen */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, sizeof(struct freed));
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
} freed SEC(".maps");

/* LPM trie frees running now: work_struct address -> start time. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(key_size, 8);
	__uint(value_size, 8);
	__uint(max_entries, 4096);
} started SEC(".maps");

SEC("raw_tp/workqueue_execute_start")
int work_start(struct bpf_raw_tracepoint_args *ctx)
{
	struct work_struct *w = (void *)ctx->args[0];
	__u64 work = ctx->args[0];
	__u32 zero = 0;
	enum bpf_map_type type = 0;
	struct freed *f = bpf_map_lookup_elem(&freed, &zero);
	struct bpf_map *map;
	__u64 fn = 0, now;

	if (!f || !f->target_fn)
		return 0;
	bpf_probe_read_kernel(&fn, sizeof(fn), &w->func);
	if (fn != f->target_fn)
		return 0;
	map = (void *)((char *)w - bpf_core_field_offset(struct bpf_map, work));
	bpf_probe_read_kernel(&type, sizeof(type), &map->map_type);
	if (type != BPF_MAP_TYPE_LPM_TRIE)
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&started, &work, &now, BPF_ANY);
	return 0;
}

SEC("raw_tp/workqueue_execute_end")
int work_end(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 work = ctx->args[0];
	__u32 zero = 0;
	struct freed *f = bpf_map_lookup_elem(&freed, &zero);
	__u64 *start = bpf_map_lookup_elem(&started, &work);

	if (start && f) {
		__sync_fetch_and_add(&f->total_ns, bpf_ktime_get_ns() - *start);
		__sync_fetch_and_add(&f->count, 1);
	}
	if (start)
		bpf_map_delete_elem(&started, &work);
	return 0;
}
