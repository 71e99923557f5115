/* The gradient reducer of live runs (allreduce.h hb_ar_reducer_*): in-place
 * float32 sums started one at a time, finished in the order started.  One
 * program, four modes (the first argument):
 *
 *   (none)     one process, a team of one without mpirun: the cpu backend
 *              (each sum finishes at its first test, nothing moves), the
 *              caller bugs (n out of range, a full queue, test and wait with
 *              nothing in flight), an unknown backend, and "cuda" refused
 *              where it cannot run (no toolkit, no CUDA device).
 *   --mpi      the cpu backend under mpirun -np 2 and -np 3 (oversubscribed):
 *              this program with --rank cpu on every rank.  77 in a build
 *              without MPI, or when mpirun is missing or cannot start 3
 *              ranks here.
 *   --cuda     the cuda backend on device memory: one rank, then mpirun -np 2
 *              (--rank cuda, one GPU per rank) when this host has two GPUs,
 *              else that part is skipped.  77 without the toolkit or a CUDA
 *              device.
 *   --rank B   one rank's part under mpirun: the checks of one process over
 *              the world on backend B; cpu also checks that "cuda" is refused
 *              alike on every rank when there is no CUDA device.
 *
 * Values: element j of sum k on rank r is (r + 1)(1 + (j + k) mod 7), small
 * integers, so the float sum over `size` ranks is exact:
 * size (size + 1) / 2 (1 + (j + k) mod 7).  Buffers are allocated and copied
 * through the device backend of the same name (profiler/device.h), so one
 * body checks host memory (cpu) and device memory (cuda).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hb_config.h"
#include "allreduce.h"  /* defines: hb_ar_reducer_*, hb_ar_team_*, hb_allreduce_cuda_devices */
#include "device.h"     /* defines: hb_device_backend, struct hb_device_ops */

#define MAX HB_AR_REDUCER_MAX_INFLIGHT

/* The sums of the FIFO check, in start order: large and small mixed, so a
 * small sum started after a large one may finish first underneath. */
static const long sizes[] = { 100000, 1, 1000, 100000, 1000, 1, 1, 100000, 1000, 1 };
#define NSUMS ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define LARGEST 100000

static struct hb_ar_team team;   /* this process's team (main) */
static const char *backend;      /* the backend under test */
static int device;               /* its CUDA ordinal (cuda) */
static char self[4096];          /* this program, for mpirun */
static const char *mpirun_flags;

/* ---- buffers through the device backend ---- */

struct mem {
	const struct hb_device_ops *ops;
	struct hb_device *dev;
	struct hb_stream *s;
};

static void mem_open(struct mem *m)
{
	const int cpu = strcmp(backend, "cpu") == 0;
	/* cpu: a budget (required), 64 MiB holds every buffer here; cuda: the device */
	const struct hb_device_config dc = { .index = device, .mem_limit_bytes = cpu ? 64.0 * 1048576 : 0 };
	struct hb_error err = { 0 };

	assert_non_null(m->ops = hb_device_backend(backend));
	if (m->ops->open(&dc, &m->dev, &err) < 0 || m->ops->stream_create(m->dev, &m->s, &err) < 0)
		fail_msg("%s device: %s", backend, err.msg);
}

static void mem_close(struct mem *m)
{
	m->ops->stream_destroy(m->s);
	m->ops->close(m->dev);
}

static float *mem_alloc(struct mem *m, long n)
{
	struct hb_error err = { 0 };
	void *p = NULL;

	if (m->ops->mem_alloc(m->dev, (size_t)n * sizeof(float), &p, &err) != 0)
		fail_msg("%s device: cannot allocate %ld floats: %s", backend, n, err.msg);
	return p;
}

static void mem_put(struct mem *m, float *dst, const float *src, long n)
{
	struct hb_error err = { 0 };

	if (m->ops->memcpy_h2d(m->s, dst, src, (size_t)n * sizeof(float), &err) < 0 ||
	    m->ops->stream_sync(m->s, &err) < 0)
		fail_msg("copy to the %s device: %s", backend, err.msg);
}

static void mem_get(struct mem *m, float *dst, const float *src, long n)
{
	struct hb_error err = { 0 };

	if (m->ops->memcpy_d2h(m->s, dst, src, (size_t)n * sizeof(float), &err) < 0 ||
	    m->ops->stream_sync(m->s, &err) < 0)
		fail_msg("copy from the %s device: %s", backend, err.msg);
}

/* ---- values ---- */

static float value(int rank, int k, long j)
{
	return (float)((rank + 1) * (1 + (j + k) % 7));
}

static void fill(float *h, int k, long n)
{
	for (long j = 0; j < n; j++)
		h[j] = value(team.rank, k, j);
}

/* h[0, n) is sum k over the team's ranks. */
static void expect_sum(const float *h, int k, long n)
{
	const float ranks = (float)(team.size * (team.size + 1) / 2);

	for (long j = 0; j < n; j++) {
		float want = ranks * (float)(1 + (j + k) % 7);

		if (h[j] != want)
			fail_msg("rank %d of %d: sum %d (%ld floats), element %ld is %g, expected %g", team.rank,
				 team.size, k, n, j, h[j], want);
	}
}

/* ---- the checks, on every rank alike ---- */

/* An unknown backend: HB_EINPUT on every rank, no reducer. */
static void check_unknown_backend(void)
{
	static char sentinel;
	struct hb_ar_reducer *r = (struct hb_ar_reducer *)(void *)&sentinel;  /* open must reset it */
	struct hb_error err = { 0 };

	assert_int_equal(hb_ar_reducer_open(&team, "gpu", 0, &r, &err), -1);
	assert_null(r);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "backend 'gpu': expected cpu or cuda"));
	assert_int_equal(hb_ar_reducer_open(&team, NULL, 0, &r, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* NSUMS sums, each started and then polled once; then polls with pauses
 * until at most two are left, and those by wait.  The k-th finish must be
 * sum k, exact; inflight counts what was started and not yet finished. */
static void check_fifo(struct hb_ar_reducer *r, struct mem *m, float *host)
{
	struct hb_error err = { 0 };
	const struct timespec pause = { 0, 50000 };
	float *buf[NSUMS];
	int started = 0, finished = 0, done;

	for (int k = 0; k < NSUMS; k++) {
		buf[k] = mem_alloc(m, sizes[k]);
		fill(host, k, sizes[k]);
		mem_put(m, buf[k], host, sizes[k]);
	}
	while (started < NSUMS) {
		if (hb_ar_reducer_start(r, buf[started], sizes[started], &err) < 0)
			fail_msg("start %d: %s", started, err.msg);
		started++;
		assert_int_equal(hb_ar_reducer_inflight(r), started - finished);
		if (hb_ar_reducer_test(r, &done, &err) < 0)
			fail_msg("test: %s", err.msg);
		if (team.size == 1)
			assert_int_equal(done, 1);  /* a team of one: at once */
		if (done) {
			mem_get(m, host, buf[finished], sizes[finished]);
			expect_sum(host, finished, sizes[finished]);
			finished++;
		}
		assert_int_equal(hb_ar_reducer_inflight(r), started - finished);
	}
	while (started - finished > 2) {
		if (hb_ar_reducer_test(r, &done, &err) < 0)
			fail_msg("test: %s", err.msg);
		if (!done) {
			nanosleep(&pause, NULL);
			continue;
		}
		mem_get(m, host, buf[finished], sizes[finished]);
		expect_sum(host, finished, sizes[finished]);
		finished++;
		assert_int_equal(hb_ar_reducer_inflight(r), started - finished);
	}
	while (finished < NSUMS) {
		if (hb_ar_reducer_wait(r, &err) < 0)
			fail_msg("wait: %s", err.msg);
		mem_get(m, host, buf[finished], sizes[finished]);
		expect_sum(host, finished, sizes[finished]);
		finished++;
		assert_int_equal(hb_ar_reducer_inflight(r), started - finished);
	}
	assert_int_equal(hb_ar_reducer_inflight(r), 0);
	for (int k = 0; k < NSUMS; k++)
		m->ops->mem_free(m->dev, buf[k]);
}

/* The caller's bugs fail without harming the reducer: test and wait with
 * nothing in flight, n = 0, n < 0, n > INT_MAX, a start beyond MAX sums in
 * flight.  The MAX one-float sums (distinct elements) are then finished by
 * wait and checked; the element of the refused start is untouched. */
static void check_caller_bugs(struct hb_ar_reducer *r, struct mem *m, float *host)
{
	struct hb_error err = { 0 };
	float *buf = mem_alloc(m, MAX + 1);
	int done = 7;

	assert_int_equal(hb_ar_reducer_test(r, &done, &err), -1);
	assert_int_equal(done, 0);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "test with no sum in flight"));
	memset(&err, 0, sizeof(err));
	assert_int_equal(hb_ar_reducer_wait(r, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "test with no sum in flight"));

	assert_int_equal(hb_ar_reducer_start(r, buf, 0, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "a sum of 0 floats (expected 1 to 2147483647)"));
	assert_int_equal(hb_ar_reducer_start(r, buf, -1, &err), -1);
	assert_int_equal(hb_ar_reducer_start(r, buf, (long)INT_MAX + 1, &err), -1);
	assert_non_null(strstr(err.msg, "a sum of 2147483648 floats"));
	assert_int_equal(hb_ar_reducer_inflight(r), 0);

	fill(host, 0, MAX + 1);
	mem_put(m, buf, host, MAX + 1);
	for (int i = 0; i < MAX; i++)
		if (hb_ar_reducer_start(r, buf + i, 1, &err) < 0)
			fail_msg("start %d of %d: %s", i + 1, MAX, err.msg);
	assert_int_equal(hb_ar_reducer_inflight(r), MAX);
	assert_int_equal(hb_ar_reducer_start(r, buf + MAX, 1, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "512 sums are in flight already"));
	assert_int_equal(hb_ar_reducer_inflight(r), MAX);
	for (int i = MAX; i > 0; i--) {
		if (hb_ar_reducer_wait(r, &err) < 0)
			fail_msg("wait with %d in flight: %s", i, err.msg);
		assert_int_equal(hb_ar_reducer_inflight(r), i - 1);
	}
	mem_get(m, host, buf, MAX + 1);
	for (long j = 0; j < MAX; j++) {
		/* sum 0 at element j is sum j's element 0 */
		float want = (float)(team.size * (team.size + 1) / 2) * (float)(1 + j % 7);

		if (host[j] != want)
			fail_msg("rank %d: one-float sum %ld is %g, expected %g", team.rank, j, host[j], want);
	}
	assert_true(host[MAX] == value(team.rank, 0, MAX));
	m->ops->mem_free(m->dev, buf);
}

/* Everything above on `backend` over the team. */
static void check_reducer(void)
{
	struct hb_ar_reducer *r = NULL;
	struct hb_error err = { 0 };
	struct mem m;
	float *host = malloc(LARGEST * sizeof(float));

	assert_non_null(host);
	check_unknown_backend();
	mem_open(&m);
	if (hb_ar_reducer_open(&team, backend, device, &r, &err) < 0)
		fail_msg("open %s: %s", backend, err.msg);
	assert_int_equal(hb_ar_reducer_inflight(r), 0);
	check_fifo(r, &m, host);
	check_caller_bugs(r, &m, host);
	/* still usable after the refused calls */
	check_fifo(r, &m, host);
	hb_ar_reducer_close(r);
	hb_ar_reducer_close(NULL);
	mem_close(&m);
	free(host);
}

/* "cuda" where it cannot run: HB_ERUNTIME on every rank, saying why (the
 * other ranks name rank 0, the lowest failing one). */
static void check_cuda_refused(void)
{
	struct hb_ar_reducer *r = NULL;
	struct hb_error err = { 0 };
	char why[256];

	assert_int_equal(hb_allreduce_cuda_devices(why, sizeof(why)), 0);
	assert_int_equal(hb_ar_reducer_open(&team, "cuda", 0, &r, &err), -1);
	assert_null(r);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, HB_HAVE_GPU ? "no CUDA device" : "this hetbatch was built without CUDA/NCCL"));
	if (team.rank > 0)
		assert_true(strncmp(err.msg, "rank 0: ", 8) == 0);
}

/* ---- the tests ---- */

static void test_one_rank(void **state)
{
	(void)state;
	assert_int_equal(team.size, 1);
	check_reducer();
}

static void test_cuda_refused(void **state)
{
	char why[256];

	(void)state;
	if (hb_allreduce_cuda_devices(why, sizeof(why)) > 0)
		skip();  /* a GPU machine: --cuda runs it */
	check_cuda_refused();
}

static void test_rank(void **state)
{
	char why[256];

	(void)state;
	check_reducer();
	if (strcmp(backend, "cpu") == 0 && hb_allreduce_cuda_devices(why, sizeof(why)) == 0)
		check_cuda_refused();
}

/* `mpirun -np NP this --rank BACKEND`: 0 when every rank passed. */
static int mpi_run(int np, const char *be)
{
	char cmd[8192];
	int st;

	/* Open MPI's own start-up allocations are never freed: no leak checks
	 * under ASan; timeout: a rank that fails mid-collective may leave its
	 * peers waiting */
	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 timeout -k 10 100 mpirun -np %d %s "
		 "'%s' --rank %s", np, mpirun_flags, self, be);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_mpi_two(void **state)
{
	(void)state;
	assert_int_equal(mpi_run(2, "cpu"), 0);
}

static void test_mpi_three(void **state)
{
	(void)state;
	assert_int_equal(mpi_run(3, "cpu"), 0);
}

static void test_cuda_mpi_two(void **state)
{
	char why[256];

	(void)state;
	if (hb_allreduce_cuda_devices(why, sizeof(why)) < 2 || !mpirun_flags)
		skip();  /* one rank per GPU: needs two, and mpirun */
	assert_int_equal(mpi_run(2, "cuda"), 0);
}

/* mpirun_flags set when MPI is built in and mpirun can start np ranks here;
 * else NULL with *why. */
static void find_mpirun(int np, const char **why)
{
	char probe[512];

	mpirun_flags = NULL;
	if (!HB_HAVE_MPI) {
		*why = "built without MPI";
		return;
	}
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		*why = "mpirun is not on PATH";
		return;
	}
	/* Open MPI refuses root unless told; oversubscribe: fewer cores than
	 * ranks; no remote agent for single-host runs (Open MPI 4 refuses to
	 * start without ssh otherwise) */
	setenv("OMPI_MCA_plm_rsh_agent", "", 0);
	snprintf(probe, sizeof(probe), "mpirun -np %d %s true >/dev/null 2>&1", np,
		 getuid() == 0 ? "--oversubscribe --allow-run-as-root" : "--oversubscribe");
	if (system(probe) != 0) {
		*why = "mpirun cannot start its ranks here";
		return;
	}
	mpirun_flags = getuid() == 0 ? "--oversubscribe --allow-run-as-root" : "--oversubscribe";
}

int main(int argc, char **argv)
{
	const struct CMUnitTest one[] = {
		cmocka_unit_test(test_one_rank),
		cmocka_unit_test(test_cuda_refused),
	};
	const struct CMUnitTest mpi[] = {
		cmocka_unit_test(test_mpi_two),
		cmocka_unit_test(test_mpi_three),
	};
	const struct CMUnitTest cuda[] = {
		cmocka_unit_test(test_one_rank),
		cmocka_unit_test(test_cuda_mpi_two),
	};
	const struct CMUnitTest rank[] = {
		cmocka_unit_test(test_rank),
	};
	const char *mode = argc > 1 ? argv[1] : "", *why = "";
	struct hb_error err = { 0 };
	char devs[256];
	ssize_t len;
	int rc;

	backend = "cpu";
	if (strcmp(mode, "--rank") == 0) {
		if (argc < 3)
			return 2;
		backend = argv[2];
		if (hb_ar_team_start(&team, &argc, &argv, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		device = team.local_rank;
		rc = cmocka_run_group_tests(rank, NULL, NULL);
		if (rc != 0)
			return 1;  /* without MPI_Finalize: mpirun ends the job */
		hb_ar_team_end(&team);
		return 0;
	}
	if (hb_ar_team_start(&team, NULL, NULL, &err) < 0 || team.size != 1) {
		fprintf(stderr, "run under mpirun only with --rank\n");
		return 1;
	}
	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return 1;
	self[len] = '\0';
	if (strcmp(mode, "--mpi") == 0) {
		find_mpirun(3, &why);
		if (!mpirun_flags) {
			fprintf(stderr, "%s: skipped\n", why);
			return 77;
		}
		return cmocka_run_group_tests(mpi, NULL, NULL);
	}
	if (strcmp(mode, "--cuda") == 0) {
		if (hb_allreduce_cuda_devices(devs, sizeof(devs)) < 1) {
			fprintf(stderr, "%s: skipped\n", devs);
			return 77;
		}
		backend = "cuda";
		if (hb_allreduce_cuda_devices(devs, sizeof(devs)) >= 2)
			find_mpirun(2, &why);
		return cmocka_run_group_tests(cuda, NULL, NULL);
	}
	return cmocka_run_group_tests(one, NULL, NULL);
}
