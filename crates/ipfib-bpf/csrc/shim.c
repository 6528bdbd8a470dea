// The few libbpf calls ipfib-bpf makes, behind a small C API (see src/ffi.rs): load the
// lookup program and its maps from an object in memory, map the arrays into userspace, run
// the program through BPF_PROG_TEST_RUN, and attach the trie-free probe.
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct ipfib_bpf {
	struct bpf_object *obj;
	int prog_fd;
	int trie_fd;
	void *slots;
	size_t slots_len;
	void *answers;
	size_t answers_len;
	void *ctl;
	size_t ctl_len;
};

struct ipfib_bpf_probe {
	struct bpf_object *obj;
	struct bpf_link *enter;
	struct bpf_link *exit;
	void *freed;
	size_t freed_len;
};

// libbpf's messages (the verifier's log among them) go to stderr only when asked for.
static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	if (getenv("IPFIB_BPF_DEBUG"))
		return vfprintf(stderr, fmt, args);
	return 0;
}

static void say(char *msg, size_t len, const char *what, int err)
{
	snprintf(msg, len, "%s: %s", what, strerror(err < 0 ? -err : err));
}

static size_t page_round(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	return (n + page - 1) / page * page;
}

static void *map_array(struct bpf_map *map, size_t *len)
{
	size_t elem = (bpf_map__value_size(map) + 7) / 8 * 8;
	void *p;

	*len = page_round(elem * bpf_map__max_entries(map));
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

void ipfib_bpf_close(struct ipfib_bpf *h)
{
	if (!h)
		return;
	if (h->slots)
		munmap(h->slots, h->slots_len);
	if (h->answers)
		munmap(h->answers, h->answers_len);
	if (h->ctl)
		munmap(h->ctl, h->ctl_len);
	bpf_object__close(h->obj);
	free(h);
}

int ipfib_bpf_open(const void *obj, size_t obj_len, uint32_t family, uint32_t trie_max,
		   uint32_t nslots, struct ipfib_bpf **out, char *msg, size_t msg_len)
{
	struct ipfib_bpf *h;
	struct bpf_map *trie, *other, *slots, *answers, *ctl;
	struct bpf_program *prog;
	int err;

	libbpf_set_print(quiet);
	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		say(msg, msg_len, "allocating the handle", ENOMEM);
		return -ENOMEM;
	}
	h->obj = bpf_object__open_mem(obj, obj_len, NULL);
	if (!h->obj) {
		err = -errno;
		say(msg, msg_len, "opening the BPF object", err);
		free(h);
		return err;
	}
	trie = bpf_object__find_map_by_name(h->obj, family == 4 ? "trie4" : "trie6");
	other = bpf_object__find_map_by_name(h->obj, family == 4 ? "trie6" : "trie4");
	slots = bpf_object__find_map_by_name(h->obj, "slots");
	answers = bpf_object__find_map_by_name(h->obj, "answers");
	ctl = bpf_object__find_map_by_name(h->obj, "control");
	prog = bpf_object__find_program_by_name(h->obj, "run_ops");
	if (!trie || !other || !slots || !answers || !ctl || !prog) {
		say(msg, msg_len, "the BPF object lacks a map or the program", ENOENT);
		ipfib_bpf_close(h);
		return -ENOENT;
	}
	if ((err = bpf_map__set_max_entries(trie, trie_max)) ||
	    (err = bpf_map__set_max_entries(slots, nslots)) ||
	    (err = bpf_map__set_max_entries(answers, nslots))) {
		say(msg, msg_len, "sizing the maps", err);
		ipfib_bpf_close(h);
		return err;
	}
	err = bpf_object__load(h->obj);
	if (err) {
		say(msg, msg_len, "loading the BPF program and maps (BPF_PROG_LOAD, BPF_MAP_CREATE)",
		    err);
		ipfib_bpf_close(h);
		return err;
	}
	h->prog_fd = bpf_program__fd(prog);
	h->trie_fd = bpf_map__fd(trie);
	h->slots = map_array(slots, &h->slots_len);
	h->answers = map_array(answers, &h->answers_len);
	h->ctl = map_array(ctl, &h->ctl_len);
	if (!h->slots || !h->answers || !h->ctl) {
		err = -errno;
		say(msg, msg_len, "mapping the arrays (mmap)", err);
		ipfib_bpf_close(h);
		return err;
	}
	*out = h;
	return 0;
}

void *ipfib_bpf_slots(struct ipfib_bpf *h) { return h->slots; }
void *ipfib_bpf_answers(struct ipfib_bpf *h) { return h->answers; }
void *ipfib_bpf_ctl(struct ipfib_bpf *h) { return h->ctl; }
int ipfib_bpf_trie_fd(struct ipfib_bpf *h) { return h->trie_fd; }

// One BPF_PROG_TEST_RUN of the program on a minimal packet; its return code into *retval.
int ipfib_bpf_run(struct ipfib_bpf *h, uint32_t *retval)
{
	unsigned char packet[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof(packet),
		    .repeat = 1);
	int err = bpf_prog_test_run_opts(h->prog_fd, &opts);

	if (err)
		return -errno;
	*retval = opts.retval;
	return 0;
}

// A lookup from userspace (BPF_MAP_LOOKUP_ELEM): 0 and *next_hop, or -ENOENT.
int ipfib_bpf_lookup(struct ipfib_bpf *h, const void *key, uint32_t *next_hop)
{
	return bpf_map_lookup_elem(h->trie_fd, key, next_hop) ? -errno : 0;
}

void ipfib_bpf_probe_close(struct ipfib_bpf_probe *p)
{
	if (!p)
		return;
	bpf_link__destroy(p->enter);
	bpf_link__destroy(p->exit);
	if (p->freed)
		munmap(p->freed, p->freed_len);
	bpf_object__close(p->obj);
	free(p);
}

int ipfib_bpf_probe_open(const void *obj, size_t obj_len, struct ipfib_bpf_probe **out,
			 char *msg, size_t msg_len)
{
	struct ipfib_bpf_probe *p;
	struct bpf_program *enter, *exit_;
	struct bpf_map *freed;
	int err;

	libbpf_set_print(quiet);
	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		say(msg, msg_len, "allocating the probe", ENOMEM);
		return -ENOMEM;
	}
	p->obj = bpf_object__open_mem(obj, obj_len, NULL);
	if (!p->obj) {
		err = -errno;
		say(msg, msg_len, "opening the trie-free probe", err);
		free(p);
		return err;
	}
	enter = bpf_object__find_program_by_name(p->obj, "work_start");
	exit_ = bpf_object__find_program_by_name(p->obj, "work_end");
	freed = bpf_object__find_map_by_name(p->obj, "freed");
	if (!enter || !exit_ || !freed) {
		say(msg, msg_len, "the probe object lacks a program or its map", ENOENT);
		ipfib_bpf_probe_close(p);
		return -ENOENT;
	}
	err = bpf_object__load(p->obj);
	if (err) {
		say(msg, msg_len, "loading the raw tracepoint programs on workqueue_execute_start/end",
		    err);
		ipfib_bpf_probe_close(p);
		return err;
	}
	p->enter = bpf_program__attach(enter);
	p->exit = bpf_program__attach(exit_);
	if (!p->enter || !p->exit) {
		err = -errno;
		say(msg, msg_len, "attaching to the workqueue raw tracepoints", err);
		ipfib_bpf_probe_close(p);
		return err;
	}
	p->freed = map_array(freed, &p->freed_len);
	if (!p->freed) {
		err = -errno;
		say(msg, msg_len, "mapping the probe's array (mmap)", err);
		ipfib_bpf_probe_close(p);
		return err;
	}
	*out = p;
	return 0;
}

void *ipfib_bpf_probe_freed(struct ipfib_bpf_probe *p) { return p->freed; }
