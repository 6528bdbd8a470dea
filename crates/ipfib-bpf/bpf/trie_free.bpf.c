// SPDX-License-Identifier: GPL-2.0
/*
 * How long the kernel takes to free an LPM trie: fentry and fexit on lpm_trie.c's
 * trie_free(), the map's free callback (the selftest times bpf_map_free_deferred, which
 * calls it, the same way). Every trie freed while attached adds its time to `freed`.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

struct bpf_map;

struct freed {
	__u64 start_ns;
	__u64 total_ns;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, sizeof(struct freed));
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
} freed SEC(".maps");

SEC("fentry/trie_free")
int BPF_PROG(trie_free_enter, struct bpf_map *map)
{
	__u32 zero = 0;
	struct freed *f = bpf_map_lookup_elem(&freed, &zero);

	if (f)
		f->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("fexit/trie_free")
int BPF_PROG(trie_free_exit, struct bpf_map *map)
{
	__u32 zero = 0;
	struct freed *f = bpf_map_lookup_elem(&freed, &zero);

	if (f && f->start_ns) {
		__sync_fetch_and_add(&f->total_ns, bpf_ktime_get_ns() - f->start_ns);
		__sync_fetch_and_add(&f->count, 1);
		f->start_ns = 0;
	}
	return 0;
}
