/* dpdk-fwd: ipfib against DPDK's rte_fib/rte_fib6 and rte_lpm/rte_lpm6 inside a real
 * RX -> lookup -> TX pipeline (issue #34 item 3). See README.md.
 *
 *   dpdk-fwd [EAL args] -- --fib FILE --pcap FILE [--lpm ipfib|rte_fib|rte_lpm] [...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "fwd.h"

#define DEFAULT_VERIFY_EXAMPLES 10

struct options {
	const char *fib, *lpm, *engine, *source, *pcap, *json, *updates, *peer;
	double seconds, speed;
	unsigned ports;
	uint64_t verify;       /* 0: no verification */
	uint32_t ring_packets;
	int quiet;
};

static volatile int stop_flag;
static volatile int replay_running;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dpdk-fwd [EAL args] -- --fib FILE --pcap FILE [options]\n"
		"\n"
		"  --fib FILE          routes: any table file ipfib reads (text, gz, bz2, MRT RIB, saved)\n"
		"  --pcap FILE         packets (Ethernet + IPv4/IPv6), e.g. from `ipfib gen pcap`\n"
		"  --lpm NAME          ipfib | rte_fib (IPv6: rte_fib6) | rte_lpm (IPv6: rte_lpm6)\n"
		"                      [ipfib]\n"
		"  --engine NAME       ipfib engine [planb]\n"
		"  --source KIND       pcap: the pcap PMD replays the file (RX copies each packet),\n"
		"                      TX into a null port; ring: the packets circulate through an\n"
		"                      rte_ring port, no copies [pcap]\n"
		"  --ring-packets N    ring source: packets circulating (the pcap's first N) [8192]\n"
		"  --seconds S         forwarding time [10]\n"
		"  --ports N           output ports, 1..%d: port = next_hop %% N [4]\n"
		"  --updates FILE      ipfib only: replay this BGP update stream (MRT or text) into a\n"
		"                      live table from a control thread while forwarding\n"
		"  --speed X           replay at the recorded pace x X; 0: as fast as possible [1]\n"
		"  --peer all|IP       whose updates to replay [all]\n"
		"  --verify N          afterwards, record N packets through the same path and check\n"
		"                      them against ipfib's reference engine on the final table\n"
		"  --json FILE         write the results as JSON\n"
		"  --quiet             no per-second lines\n"
		"\n"
		"The program adds its own vdevs (net_pcap_dpdkfwd, net_null_dpdkfwd or a ring port):\n"
		"pass no --vdev. Forwarding runs on the EAL's main lcore: pin it with -l CPU.\n",
		MAX_PORTS);
}

static int parse_double(const char *opt, const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) {
		fprintf(stderr, "dpdk-fwd: %s %s: not a number\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "dpdk-fwd: %s %s: want a whole number from %llu to %llu\n", opt, s,
			(unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* 0 ok, 1 help printed, -1 error (printed). */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum { O_FIB = 256, O_LPM, O_ENGINE, O_SOURCE, O_PCAP, O_SECONDS, O_PORTS, O_JSON,
	       O_UPDATES, O_SPEED, O_PEER, O_VERIFY, O_RING, O_QUIET, O_HELP };
	static const struct option longs[] = {
		{"fib", required_argument, NULL, O_FIB},
		{"lpm", required_argument, NULL, O_LPM},
		{"engine", required_argument, NULL, O_ENGINE},
		{"source", required_argument, NULL, O_SOURCE},
		{"pcap", required_argument, NULL, O_PCAP},
		{"seconds", required_argument, NULL, O_SECONDS},
		{"ports", required_argument, NULL, O_PORTS},
		{"json", required_argument, NULL, O_JSON},
		{"updates", required_argument, NULL, O_UPDATES},
		{"speed", required_argument, NULL, O_SPEED},
		{"peer", required_argument, NULL, O_PEER},
		{"verify", required_argument, NULL, O_VERIFY},
		{"ring-packets", required_argument, NULL, O_RING},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, speed_given = 0, peer_given = 0;

	memset(o, 0, sizeof(*o));
	o->lpm = "ipfib";
	o->engine = "planb";
	o->source = "pcap";
	o->peer = "all";
	o->seconds = 10;
	o->speed = 1;
	o->ports = 4;
	o->ring_packets = 8192;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case O_FIB: o->fib = optarg; break;
		case O_LPM: o->lpm = optarg; break;
		case O_ENGINE: o->engine = optarg; break;
		case O_SOURCE: o->source = optarg; break;
		case O_PCAP: o->pcap = optarg; break;
		case O_JSON: o->json = optarg; break;
		case O_UPDATES: o->updates = optarg; break;
		case O_PEER: o->peer = optarg; peer_given = 1; break;
		case O_QUIET: o->quiet = 1; break;
		case O_SECONDS:
			if (parse_double("--seconds", optarg, &o->seconds) != 0)
				return -1;
			if (o->seconds <= 0 || o->seconds > 1e6) {
				fprintf(stderr, "dpdk-fwd: --seconds %s: want more than 0\n", optarg);
				return -1;
			}
			break;
		case O_SPEED:
			if (parse_double("--speed", optarg, &o->speed) != 0)
				return -1;
			speed_given = 1;
			break;
		case O_PORTS:
			if (parse_u64("--ports", optarg, 1, MAX_PORTS, &v) != 0)
				return -1;
			o->ports = (unsigned)v;
			break;
		case O_VERIFY:
			if (parse_u64("--verify", optarg, 1, 100000000, &v) != 0)
				return -1;
			o->verify = v;
			break;
		case O_RING:
			if (parse_u64("--ring-packets", optarg, 1, 1u << 24, &v) != 0)
				return -1;
			o->ring_packets = (uint32_t)v;
			break;
		case 'h':
		case O_HELP:
			usage(stdout);
			return 1;
		default:
			if (optopt != 0)
				fprintf(stderr, "dpdk-fwd: option needs a value or is unknown: %s\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "dpdk-fwd: unknown option %s\n", argv[optind - 1]);
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dpdk-fwd: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	if (o->fib == NULL || o->pcap == NULL) {
		fprintf(stderr, "dpdk-fwd: --fib and --pcap are required (after `--`; --help)\n");
		return -1;
	}
	if (strcmp(o->lpm, "ipfib") && strcmp(o->lpm, "rte_fib") && strcmp(o->lpm, "rte_lpm")) {
		fprintf(stderr, "dpdk-fwd: --lpm %s: want ipfib, rte_fib or rte_lpm\n", o->lpm);
		return -1;
	}
	if (strcmp(o->source, "pcap") && strcmp(o->source, "ring")) {
		fprintf(stderr, "dpdk-fwd: --source %s: want pcap or ring\n", o->source);
		return -1;
	}
	if (o->updates != NULL && strcmp(o->lpm, "ipfib") != 0) {
		fprintf(stderr, "dpdk-fwd: --updates needs --lpm ipfib (DPDK's structures are "
			"measured static here)\n");
		return -1;
	}
	if (o->updates == NULL && (speed_given || peer_given)) {
		fprintf(stderr, "dpdk-fwd: --speed and --peer go with --updates\n");
		return -1;
	}
	return 0;
}

/* ---- the control thread (--updates) --------------------------------------------------- */

struct control {
	ipfib_replay *replay;
	ipfib_live *live;
	double speed;
	ipfib_replay_result result;
	int rc;
	char err[512];
};

static void *control_main(void *arg)
{
	struct control *c = arg;
	c->rc = ipfib_replay_run(c->replay, c->live, c->speed, &c->result, c->err, sizeof(c->err));
	__atomic_store_n(&replay_running, 0, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- verification ---------------------------------------------------------------------- */

static void addr_text(const struct record *r, char *buf, size_t len)
{
	if (r->family == 4)
		inet_ntop(AF_INET, r->addr, buf, (socklen_t)len);
	else if (r->family == 6)
		inet_ntop(AF_INET6, r->addr, buf, (socklen_t)len);
	else
		snprintf(buf, len, "(not IP)");
}

static void port_text(uint16_t port, char *buf, size_t len)
{
	if (port == PORT_NO_ROUTE)
		snprintf(buf, len, "drop (no route)");
	else if (port == PORT_NON_IP)
		snprintf(buf, len, "drop (not IP)");
	else
		snprintf(buf, len, "port %u", port);
}

/* Returns the mismatches; -1 if the reference cannot be built. */
static int64_t verify(const struct record *rec, uint64_t n, const ipfib_table *final,
		      unsigned nports, uint64_t *non_ip)
{
	char err[512];
	ipfib_fib *ref = ipfib_fib_build(final, "reference", err, sizeof(err));
	int64_t bad = 0;
	if (ref == NULL) {
		fprintf(stderr, "dpdk-fwd: verify: building the reference engine: %s\n", err);
		return -1;
	}
	*non_ip = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct record *r = &rec[i];
		uint32_t nh = 0;
		int found;
		if (r->family == 0) {
			(*non_ip)++;
			continue;
		}
		if (r->family == 4) {
			uint32_t be;
			memcpy(&be, r->addr, 4);
			found = ipfib_lookup_v4(ref, ntohl(be), &nh);
		} else {
			found = ipfib_lookup_v6(ref, r->addr, &nh);
		}
		uint32_t want_nh = found == 1 ? nh : NH_MISS;
		uint16_t want_port = found == 1 ? (uint16_t)(nh % nports) : PORT_NO_ROUTE;
		if (want_nh != r->next_hop || want_port != r->port) {
			if (bad < DEFAULT_VERIFY_EXAMPLES) {
				char a[64], got[32], want[32];
				addr_text(r, a, sizeof(a));
				port_text(r->port, got, sizeof(got));
				port_text(want_port, want, sizeof(want));
				fprintf(stderr, "verify: packet %llu to %s: got %s (next hop %s%u), "
					"reference %s (next hop %s%u)\n", (unsigned long long)i, a, got,
					r->next_hop == NH_MISS ? "none " : "",
					r->next_hop == NH_MISS ? 0 : r->next_hop, want,
					want_nh == NH_MISS ? "none " : "", want_nh == NH_MISS ? 0 : want_nh);
			}
			bad++;
		}
	}
	ipfib_fib_free(ref);
	return bad;
}

/* ---- report ------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of the per-second Mpps of the seconds with (replay = want) or all (want < 0). */
static double median_mpps(const struct fwd *f, int want)
{
	double *v = malloc((f->nseconds + 1) * sizeof(double));
	unsigned k = 0;
	double m = 0;
	if (v == NULL)
		return 0;
	for (unsigned i = 0; i < f->nseconds; i++)
		if (want < 0 || f->per_second[i].replay == want)
			v[k++] = f->per_second[i].mpps;
	if (k > 0) {
		qsort(v, k, sizeof(double), cmp_double);
		m = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	}
	free(v);
	return m;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s != NULL && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void cpu_name(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(buf, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			if (c != NULL) {
				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				c[strcspn(c, "\n")] = '\0';
				snprintf(buf, len, "%s", c);
			}
			break;
		}
	}
	fclose(f);
}

struct results {
	struct counters c;
	double seconds, mpps, mpps_median, lookup_cpp, total_cpp, share;
	double mpps_during, mpps_after, seconds_during, seconds_after;
	int have_replay;
	ipfib_replay_result replay;
	int verified;
	uint64_t verify_packets, verify_non_ip;
	int64_t mismatches;
	unsigned lcore;
	int cpu;
	char cpu_name[128];
	uint64_t tsc_hz;
	const struct second *per_second;
	unsigned nseconds;
};

/* Writes into `f` (opened at the start, so that a bad path fails before the run) and closes
 * it. */
static int write_json(FILE *f, const char *path, const struct options *o, const struct lpm *l,
		      const struct ports *p, const struct results *r)
{
	fprintf(f, "{\n  \"lpm\": ");
	json_str(f, o->lpm);
	fprintf(f, ",\n  \"engine\": ");
	if (strcmp(o->lpm, "ipfib") == 0)
		json_str(f, o->engine);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"structures\": ");
	json_str(f, l->desc);
	fprintf(f, ",\n  \"source\": ");
	json_str(f, o->source);
	if (p->kind == SOURCE_RING)
		fprintf(f, ",\n  \"ring_packets\": %u", p->ring_packets);
	fprintf(f, ",\n  \"fib\": ");
	json_str(f, o->fib);
	fprintf(f, ",\n  \"routes\": {\"ipv4\": %llu, \"ipv6\": %llu}",
		(unsigned long long)l->routes4, (unsigned long long)l->routes6);
	fprintf(f, ",\n  \"pcap\": ");
	json_str(f, o->pcap);
	fprintf(f, ",\n  \"cpu\": ");
	json_str(f, r->cpu_name);
	fprintf(f, ",\n  \"lcore\": %u,\n  \"tsc_hz\": %llu", r->lcore, (unsigned long long)r->tsc_hz);
	fprintf(f, ",\n  \"packets\": %llu,\n  \"ipv4\": %llu,\n  \"ipv6\": %llu",
		(unsigned long long)r->c.packets, (unsigned long long)r->c.ipv4,
		(unsigned long long)r->c.ipv6);
	fprintf(f, ",\n  \"seconds\": %.3f,\n  \"mpps\": {\"median\": %.3f, \"overall\": %.3f}",
		r->seconds, r->mpps_median, r->mpps);
	fprintf(f, ",\n  \"lookup_cycles_per_packet\": %.2f,\n  \"total_cycles_per_packet\": %.2f"
		",\n  \"lookup_share\": %.4f", r->lookup_cpp, r->total_cpp, r->share);
	fprintf(f, ",\n  \"per_second\": [");
	for (unsigned i = 0; i < r->nseconds; i++)
		fprintf(f, "%s\n    {\"mpps\": %.3f, \"lookup_cycles_per_packet\": %.2f, "
			"\"total_cycles_per_packet\": %.2f, \"no_route\": %llu, \"replay\": %s}",
			i ? "," : "", r->per_second[i].mpps, r->per_second[i].lookup_cpp,
			r->per_second[i].total_cpp, (unsigned long long)r->per_second[i].no_route,
			r->per_second[i].replay ? "true" : "false");
	fprintf(f, "%s]", r->nseconds ? "\n  " : "");
	fprintf(f, ",\n  \"ports\": [");
	for (unsigned i = 0; i < o->ports; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)r->c.port[i]);
	fprintf(f, "],\n  \"no_route\": %llu,\n  \"non_ip\": %llu,\n  \"tx\": %llu"
		",\n  \"tx_dropped\": %llu", (unsigned long long)r->c.no_route,
		(unsigned long long)r->c.non_ip, (unsigned long long)r->c.tx,
		(unsigned long long)r->c.tx_dropped);
	if (r->have_replay) {
		fprintf(f, ",\n  \"updates\": ");
		json_str(f, o->updates);
		fprintf(f, ",\n  \"speed\": %g,\n  \"peer\": ", o->speed);
		json_str(f, o->peer);
		fprintf(f, ",\n  \"mpps_during\": %.3f,\n  \"mpps_after\": %.3f"
			",\n  \"seconds_during\": %.3f,\n  \"seconds_after\": %.3f",
			r->mpps_during, r->mpps_after, r->seconds_during, r->seconds_after);
		fprintf(f, ",\n  \"replay\": {\"updates\": %llu, \"publishes\": %llu, \"seconds\": %.3f, "
			"\"visible_us_p50\": %.1f, \"visible_us_p99\": %.1f, \"visible_us_max\": %.1f}",
			(unsigned long long)r->replay.updates, (unsigned long long)r->replay.publishes,
			r->replay.seconds, r->replay.visible_us_p50, r->replay.visible_us_p99,
			r->replay.visible_us_max);
	}
	if (r->verified)
		fprintf(f, ",\n  \"verify\": {\"packets\": %llu, \"mismatches\": %lld}",
			(unsigned long long)r->verify_packets, (long long)r->mismatches);
	fprintf(f, ",\n  \"interrupted\": %s\n}\n", stop_flag ? "true" : "false");
	int failed = ferror(f);
	if (fclose(f) != 0 || failed) {
		fprintf(stderr, "dpdk-fwd: --json %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct options o;
	char err[1024];
	int app_start = argc, status = 1, eal_up = 0;
	ipfib_table *table = NULL, *final = NULL;
	ipfib_replay *replay = NULL;
	ipfib_live *live = NULL;
	struct lpm lpm;
	struct ports ports;
	struct pcap_info pinfo;
	struct fwd f;
	struct results res;
	struct control ctl;
	struct record *rec = NULL;
	FILE *json = NULL;
	pthread_t control_thread;
	int control_started = 0, abandoned = 0;
	cpu_set_t process_cpus, control_cpus;

	memset(&lpm, 0, sizeof(lpm));
	memset(&ports, 0, sizeof(ports));
	memset(&f, 0, sizeof(f));
	memset(&res, 0, sizeof(res));
	memset(&ctl, 0, sizeof(ctl));

	/* The application's arguments (after `--`) are checked, and the files read, before the
	 * EAL starts. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			app_start = i;
			break;
		}
	{
		char **app = calloc((size_t)(argc - app_start) + 2, sizeof(char *));
		if (app == NULL)
			return 1;
		app[0] = argv[0];
		int n = 1;
		for (int i = app_start + 1; i < argc; i++)
			app[n++] = argv[i];
		int ret = parse_args(n, app, &o);
		free(app);
		if (ret != 0)
			return ret > 0 ? 0 : 2;
	}

	if (o.json != NULL && (json = fopen(o.json, "w")) == NULL) {
		fprintf(stderr, "dpdk-fwd: --json %s: %s\n", o.json, strerror(errno));
		return 1;
	}
	if (sched_getaffinity(0, sizeof(process_cpus), &process_cpus) != 0)
		CPU_ZERO(&process_cpus);

	table = ipfib_table_load(o.fib, err, sizeof(err));
	if (table == NULL) {
		fprintf(stderr, "dpdk-fwd: --fib %s: %s\n", o.fib, err);
		goto out;
	}
	if (pcap_scan(o.pcap, &pinfo, err, sizeof(err)) != 0) {
		fprintf(stderr, "dpdk-fwd: %s\n", err);
		goto out;
	}
	if (o.updates != NULL) {
		replay = ipfib_replay_load(o.updates, table, o.peer, err, sizeof(err));
		if (replay == NULL) {
			fprintf(stderr, "dpdk-fwd: --updates %s: %s\n", o.updates, err);
			goto out;
		}
	}

	/* EAL: its log to stderr, so that stdout holds the report */
	rte_openlog_stream(stderr);
	int eal_argc = app_start;
	if (rte_eal_init(eal_argc, argv) < 0) {
		fprintf(stderr, "dpdk-fwd: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		goto out;
	}
	eal_up = 1;

	res.lcore = rte_lcore_id();
	res.cpu = -1;
	{
		rte_cpuset_t lc = rte_lcore_cpuset(res.lcore);
		control_cpus = process_cpus;
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &lc)) {
				if (res.cpu < 0)
					res.cpu = cpu;
				CPU_CLR(cpu, &control_cpus);
			}
		if (CPU_COUNT(&control_cpus) == 0)
			control_cpus = process_cpus;
	}
	res.tsc_hz = rte_get_tsc_hz();
	cpu_name(res.cpu_name, sizeof(res.cpu_name));
	printf("dpdk-fwd: forwarding on lcore %u (cpu %d, %s), TSC %.3f GHz%s\n", res.lcore, res.cpu,
	       res.cpu_name, (double)res.tsc_hz / 1e9,
	       rte_lcore_count() > 1 ? "; the other lcores stay idle" : "");
	printf("dpdk-fwd: table %s: %zu routes; pcap %s: %llu packets (longest %u bytes)\n", o.fib,
	       ipfib_table_len(table), o.pcap, (unsigned long long)pinfo.packets, pinfo.max_len);

	if (replay != NULL) {
		/* The live table's rebuilder thread inherits the creating thread's CPUs: create it
		 * off the forwarding CPU. */
		cpu_set_t mine;
		int have = pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) == 0;
		pthread_setaffinity_np(pthread_self(), sizeof(control_cpus), &control_cpus);
		live = ipfib_live_new(table, o.engine, 100, err, sizeof(err));
		if (have)
			pthread_setaffinity_np(pthread_self(), sizeof(mine), &mine);
		if (live == NULL) {
			fprintf(stderr, "dpdk-fwd: ipfib_live_new(engine %s): %s\n", o.engine, err);
			goto out;
		}
		printf("dpdk-fwd: replay %s (peer %s): %zu FIB changes over %.1f recorded s, speed %g%s\n",
		       o.updates, o.peer, ipfib_replay_len(replay), ipfib_replay_span(replay), o.speed,
		       o.speed <= 0 ? " (as fast as possible)" : "");
	}

	if (lpm_build(&lpm, o.lpm, table, o.engine, live, err, sizeof(err)) != 0) {
		fprintf(stderr, "dpdk-fwd: --lpm %s: %s\n", o.lpm, err);
		goto out;
	}
	printf("dpdk-fwd: %s: %s\n", lpm.name, lpm.desc);

	enum source_kind kind = strcmp(o.source, "ring") == 0 ? SOURCE_RING : SOURCE_PCAP;
	if (ports_open(&ports, kind, o.pcap, &pinfo, o.ring_packets, err, sizeof(err)) != 0) {
		fprintf(stderr, "dpdk-fwd: --source %s: %s\n", o.source, err);
		goto out;
	}
	if (kind == SOURCE_RING)
		printf("dpdk-fwd: source ring: %u packets circulating in a %u-entry ring (port %u)\n",
		       ports.ring_packets, ports.ring_size, ports.rx_port);
	else
		printf("dpdk-fwd: source pcap: RX port %u (pcap PMD, infinite_rx), TX port %u "
		       "(net_null), %llu mbufs\n", ports.rx_port, ports.tx_port,
		       (unsigned long long)ports.pool_size);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	f.lpm = &lpm;
	f.ports = &ports;
	f.nports = o.ports;
	f.nports_magic = UINT64_MAX / o.ports + 1;
	f.seconds = o.seconds;
	f.tsc_hz = res.tsc_hz;
	f.stop = &stop_flag;
	f.quiet = o.quiet;

	if (replay != NULL) {
		pthread_attr_t attr;
		ctl.replay = replay;
		ctl.live = live;
		ctl.speed = o.speed;
		replay_running = 1;
		f.replay_running = &replay_running;
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(control_cpus), &control_cpus);
		int ret = pthread_create(&control_thread, &attr, control_main, &ctl);
		pthread_attr_destroy(&attr);
		if (ret != 0) {
			fprintf(stderr, "dpdk-fwd: cannot start the control thread: %s\n", strerror(ret));
			goto out;
		}
		control_started = 1;
	}

	fwd_run(&f);

	if (control_started && stop_flag && __atomic_load_n(&replay_running, __ATOMIC_ACQUIRE)) {
		/* ipfib_replay_run cannot be cancelled: leave it running (the process ends after
		 * the report) and keep its live table and replay alive. */
		printf("dpdk-fwd: interrupted during the replay: not waiting for it, no replay "
		       "figures\n");
		control_started = 0;
		abandoned = 1;
	}
	if (control_started) {
		pthread_join(control_thread, NULL);
		control_started = 0;
		if (ctl.rc != 0) {
			fprintf(stderr, "dpdk-fwd: ipfib_replay_run: %s\n", ctl.err);
			goto out;
		}
		res.have_replay = 1;
		res.replay = ctl.result;
	}

	/* the figures of the timed run */
	res.c = f.c;
	res.seconds = (double)(f.end_tsc - f.start_tsc) / (double)res.tsc_hz;
	res.mpps = res.seconds > 0 ? (double)res.c.packets / res.seconds / 1e6 : 0;
	res.mpps_median = median_mpps(&f, -1);
	res.per_second = f.per_second;
	res.nseconds = f.nseconds;
	res.lookup_cpp = res.c.packets ? (double)res.c.lookup_cycles / (double)res.c.packets : 0;
	res.total_cpp = res.c.packets ? (double)(f.end_tsc - f.start_tsc) / (double)res.c.packets : 0;
	res.share = res.total_cpp > 0 ? res.lookup_cpp / res.total_cpp : 0;
	if (res.have_replay) {
		uint64_t end = f.replay_end_tsc ? f.replay_end_tsc : f.end_tsc;
		uint64_t during = f.replay_end_tsc ? f.packets_at_replay_end : res.c.packets;
		res.seconds_during = (double)(end - f.start_tsc) / (double)res.tsc_hz;
		res.seconds_after = (double)(f.end_tsc - end) / (double)res.tsc_hz;
		res.mpps_during = res.seconds_during > 0 ? (double)during / res.seconds_during / 1e6 : 0;
		res.mpps_after = res.seconds_after > 0
					 ? (double)(res.c.packets - during) / res.seconds_after / 1e6
					 : 0;
	}

	if (o.verify > 0 && !stop_flag) {
		rec = calloc(o.verify, sizeof(*rec));
		if (rec == NULL) {
			fprintf(stderr, "dpdk-fwd: --verify %llu: out of memory\n",
				(unsigned long long)o.verify);
			goto out;
		}
		fwd_verify(&f, rec, o.verify);
		final = replay != NULL ? ipfib_replay_final(replay) : NULL;
		res.mismatches = verify(rec, o.verify, final != NULL ? final : table, o.ports,
					&res.verify_non_ip);
		if (res.mismatches < 0)
			goto out;
		res.verified = 1;
		res.verify_packets = o.verify;
	}

	/* report */
	printf("\n== %s%s%s, source %s, %u ports, table %s\n", lpm.name,
	       strcmp(o.lpm, "ipfib") == 0 ? " engine " : "",
	       strcmp(o.lpm, "ipfib") == 0 ? o.engine : "", o.source, o.ports, o.fib);
	printf("packets       %llu in %.2f s (IPv4 %llu, IPv6 %llu)\n",
	       (unsigned long long)res.c.packets, res.seconds, (unsigned long long)res.c.ipv4,
	       (unsigned long long)res.c.ipv6);
	printf("Mpps          %.2f median of %u seconds, %.2f overall\n", res.mpps_median,
	       f.nseconds, res.mpps);
	printf("cycles/packet lookup %.1f, total %.1f, lookup share %.1f %%\n", res.lookup_cpp,
	       res.total_cpp, 100 * res.share);
	printf("ports        ");
	for (unsigned i = 0; i < o.ports; i++)
		printf(" %u:%llu", i, (unsigned long long)res.c.port[i]);
	printf("\nno route      %llu    non-IP %llu    TX %llu    TX dropped %llu\n",
	       (unsigned long long)res.c.no_route, (unsigned long long)res.c.non_ip,
	       (unsigned long long)res.c.tx, (unsigned long long)res.c.tx_dropped);
	if (res.have_replay) {
		printf("replay        %llu updates, %llu publishes, %.2f s; visible after p50 %.0f us, "
		       "p99 %.0f us, max %.0f us\n", (unsigned long long)res.replay.updates,
		       (unsigned long long)res.replay.publishes, res.replay.seconds,
		       res.replay.visible_us_p50, res.replay.visible_us_p99, res.replay.visible_us_max);
		printf("Mpps          during the replay %.2f (%.2f s), after it %.2f (%.2f s)\n",
		       res.mpps_during, res.seconds_during, res.mpps_after, res.seconds_after);
		if (res.seconds_after < 1)
			printf("              (less than 1 s after the replay: raise --seconds or "
			       "--speed for a steadier 'after' figure)\n");
	}
	if (res.verified)
		printf("verify: %llu packets, %lld mismatches%s\n",
		       (unsigned long long)res.verify_packets, (long long)res.mismatches,
		       res.verify_non_ip ? " (non-IP packets not checked)" : "");
	if (stop_flag)
		printf("(interrupted)\n");
	fflush(stdout);

	if (json != NULL) {
		FILE *j = json;
		json = NULL;
		if (write_json(j, o.json, &o, &lpm, &ports, &res) != 0)
			goto out;
	}
	status = res.verified && res.mismatches > 0 ? 1 : 0;

out:
	if (json != NULL) {
		/* no results: leave no half-written file behind */
		fclose(json);
		remove(o.json);
	}
	if (control_started)
		pthread_join(control_thread, NULL);
	if (eal_up)
		ports_close(&ports);
	lpm_free(&lpm);
	if (!abandoned) {
		ipfib_live_free(live);
		ipfib_replay_free(replay);
	}
	ipfib_table_free(final);
	ipfib_table_free(table);
	free(rec);
	free(f.per_second);
	if (eal_up)
		rte_eal_cleanup();
	return status;
}
