// hop: the migration stress of the 2022 starvation report, run on a real
// kernel for a side-by-side with rqemu's hopper workload (bench/hopper.go):
// -n threads per CPU, each started on its CPU, spinning -b usec of its own
// run time and then moving itself to another CPU with
// sched_setaffinity(0, {cpu}), for -d seconds. Waits are gaps in the
// thread's own clock reads (it never sleeps, so a gap is time runnable but
// not running, or the vCPU not running): the first one (creation to first
// instruction), the one across each hop (call to return: the stopper, the
// move and the wait on the new CPU), and those inside a burst. As /init of
// an initramfs (qemu.sh) it takes hop.n= hop.b= hop.d= from the kernel
// command line, and with hop.trace=1 writes the sched_switch and
// sched_migrate_task trace and the runqueues (/sys/kernel/debug/sched/debug,
// once a second) to the second serial port.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/syscall.h>

static int ncpu, perCPU = 50, burstUS = 100, durS = 10, asInit;
static atomic_int stop;
static int64_t t0;

static inline int64_t now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define NB 64 // log2 buckets of ns
struct st {
	int64_t created, first, maxHop, maxPre, hops, ran;
	int64_t hopH[NB], preH[NB];
	int cpu, tid;
	int64_t maxHopAt;
	uint64_t rng;
} *sts;

static void wr(const char *path, const char *v) {
	int fd = open(path, O_WRONLY);
	if (fd < 0) { perror(path); return; }
	write(fd, v, strlen(v));
	close(fd);
}
static int tracing;
static int bucket(int64_t d) {
	int b = 0;
	while (d > 1 && b < NB - 1) {
		d >>= 1;
		b++;
	}
	return b;
}

static void *worker(void *arg) {
	struct st *s = arg;
	int64_t t = now();
	s->first = t - s->created;
	s->ran = 1;
	s->tid = (int)syscall(SYS_gettid);
	int cpu = s->cpu;
	const int64_t burst = (int64_t)burstUS * 1000, gap = 20000;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int64_t run = 0, last = now();
		while (run < burst) {
			int64_t n = now(), d = n - last;
			if (d > gap) {
				s->preH[bucket(d)]++;
				if (d > s->maxPre)
					s->maxPre = d;
			} else
				run += d;
			last = n;
		}
		s->rng = s->rng * 6364136223846793005ULL + 1442695040888963407ULL;
		int next = (int)((s->rng >> 33) % (uint64_t)(ncpu - 1));
		if (next >= cpu)
			next++;
		cpu_set_t m;
		CPU_ZERO(&m);
		CPU_SET(next, &m);
		int64_t a = now();
		if (sched_setaffinity(0, sizeof m, &m) != 0) {
			perror("sched_setaffinity");
			exit(1);
		}
		int64_t d = now() - a;
		s->hopH[bucket(d)]++;
		if (d > s->maxHop) {
			s->maxHop = d;
			s->maxHopAt = a;
		}
		s->hops++;
		cpu = next;
	}
	return NULL;
}

static double pct(int64_t *h, double q) {
	int64_t tot = 0;
	for (int i = 0; i < NB; i++)
		tot += h[i];
	if (!tot)
		return 0;
	int64_t want = (int64_t)(q * tot), c = 0;
	for (int i = 0; i < NB; i++) {
		c += h[i];
		if (c > want)
			return (double)(1LL << i) * 2 / 1e6; // bucket upper bound, ms
	}
	return 0;
}

static int cmp64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	asInit = getpid() == 1;
	if (asInit) {
		mount("proc", "/proc", "proc", 0, NULL);
		// parameters from the kernel command line: hop.n= hop.b= hop.d=
		FILE *f = fopen("/proc/cmdline", "r");
		char buf[1024] = {0};
		if (f) {
			fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
		}
		char *p;
		if ((p = strstr(buf, "hop.n=")))
			perCPU = atoi(p + 6);
		if ((p = strstr(buf, "hop.b=")))
			burstUS = atoi(p + 6);
		if ((p = strstr(buf, "hop.d=")))
			durS = atoi(p + 6);
		printf("cmdline: %s", buf);
		if (strstr(buf, "hop.trace=1")) {
			tracing = 1;
			mount("sysfs", "/sys", "sysfs", 0, NULL);
			mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
			mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
			mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
			wr("/sys/kernel/tracing/buffer_size_kb", "65536");
			wr("/sys/kernel/tracing/trace_clock", "mono");
			wr("/sys/kernel/tracing/events/sched/sched_switch/enable", "1");
			wr("/sys/kernel/tracing/events/sched/sched_migrate_task/enable", "1");
			wr("/sys/kernel/tracing/tracing_on", "1");
		}
	} else {
		int o;
		while ((o = getopt(argc, argv, "n:b:d:")) != -1) {
			if (o == 'n')
				perCPU = atoi(optarg);
			else if (o == 'b')
				burstUS = atoi(optarg);
			else if (o == 'd')
				durS = atoi(optarg);
		}
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int total = perCPU * ncpu;
	printf("hop: %d cpus, %d threads per cpu (%d), burst %d us, %d s\n", ncpu, perCPU, total, burstUS, durS);
	fflush(stdout);
	sts = calloc(total, sizeof *sts);
	pthread_t *th = calloc(total, sizeof *th);
	t0 = now();
	for (int i = 0; i < total; i++) {
		sts[i].cpu = i % ncpu;
		sts[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 << 10);
		cpu_set_t m;
		CPU_ZERO(&m);
		CPU_SET(i % ncpu, &m);
		pthread_attr_setaffinity_np(&at, sizeof m, &m);
		sts[i].created = now();
		if (pthread_create(&th[i], &at, worker, &sts[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	int64_t started = now();
	for (int s = 0; s < durS; s++) {
		sleep(1);
		if (tracing && s >= 1) {
			// the runqueues as the kernel sees them: per cfs_rq min_vruntime and each runnable task's tree-key
			int in = open("/sys/kernel/debug/sched/debug", O_RDONLY), out = open("/dev/ttyS1", O_WRONLY);
			static char db[1 << 20];
			ssize_t r;
			dprintf(out, "=== SCHED DEBUG t=%d\n", s + 1);
			while (in >= 0 && out >= 0 && (r = read(in, db, sizeof db)) > 0)
				write(out, db, r);
			dprintf(out, "=== END\n");
			close(in);
			close(out);
		}
		int never = 0;
		for (int i = 0; i < total; i++)
			never += !sts[i].ran;
		if (never || s == durS - 1 || s % 10 == 9) {
			printf("t=%ds never ran: %d\n", s + 1, never);
			fflush(stdout);
		}
	}
	atomic_store(&stop, 1);
	if (tracing)
		wr("/sys/kernel/tracing/tracing_on", "0");
	int64_t end = now();
	int never = 0;
	int64_t *firsts = calloc(total, sizeof(int64_t)), *hops = calloc(total, sizeof(int64_t)), *pres = calloc(total, sizeof(int64_t));
	int64_t hopH[NB] = {0}, preH[NB] = {0}, nh = 0;
	for (int i = 0; i < total; i++) {
		if (!sts[i].ran) {
			never++;
			firsts[i] = end - sts[i].created;
		} else
			firsts[i] = sts[i].first;
		hops[i] = sts[i].maxHop;
		pres[i] = sts[i].maxPre;
		nh += sts[i].hops;
		for (int b = 0; b < NB; b++) {
			hopH[b] += sts[i].hopH[b];
			preH[b] += sts[i].preH[b];
		}
	}
	qsort(firsts, total, sizeof(int64_t), cmp64);
	qsort(hops, total, sizeof(int64_t), cmp64);
	qsort(pres, total, sizeof(int64_t), cmp64);
	printf("creation took %.1f ms; hops %lld (%.0f/s)\n", (started - t0) / 1e6, (long long)nh, nh / ((end - t0) / 1e9));
	printf("first wait (create to run): max %.3f ms, p99.9 task %.3f ms, median %.3f ms, never ran %d\n",
	       firsts[total - 1] / 1e6, firsts[(int)(0.999 * (total - 1))] / 1e6, firsts[total / 2] / 1e6, never);
	printf("hop (setaffinity call to return): max %.3f ms, p99.9 of hops <= %.3f ms, median task max %.3f ms\n",
	       hops[total - 1] / 1e6, pct(hopH, 0.999), hops[total / 2] / 1e6);
	printf("in-burst gaps > 20us: max %.3f ms, p99.9 of gaps <= %.3f ms, median task max %.3f ms\n",
	       pres[total - 1] / 1e6, pct(preH, 0.999), pres[total / 2] / 1e6);
	// the five longest hops: tid and when
	for (int k = 0; k < 5; k++) {
		int w = -1;
		for (int i = 0; i < total; i++)
			if (sts[i].maxHop > 0 && (w < 0 || sts[i].maxHop > sts[w].maxHop))
				w = i;
		if (w < 0)
			break;
		printf("long hop: tid %d %.3f ms at %.6f s\n", sts[w].tid, sts[w].maxHop / 1e6, sts[w].maxHopAt / 1e9);
		sts[w].maxHop = -1;
	}
	fflush(stdout);
	if (tracing) {
		int in = open("/sys/kernel/tracing/trace", O_RDONLY), out = open("/dev/ttyS1", O_WRONLY);
		if (in < 0 || out < 0)
			perror("trace dump");
		static char tb[1 << 20];
		ssize_t r;
		long long tot = 0;
		while (in >= 0 && out >= 0 && (r = read(in, tb, sizeof tb)) > 0) {
			write(out, tb, r);
			tot += r;
		}
		fsync(out);
		printf("trace: %lld bytes\n", tot);
		fflush(stdout);
	}
	if (asInit) {
		sync();
		reboot(RB_POWER_OFF);
	}
	_exit(0);
}
