/* Wall and CPU time of one PolluxSched round (sim/policies/pollux/arbiter_pollux.c) with 20
 * jobs on the 64-GPU pollux-t4 cluster: every job arrives at t = 0 and
 * trains long enough that all 20 stay active for the rounds measured (the
 * run is stopped at max_sim_s).  Usage: bench_arbiter_pollux [rounds] [seed]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "default_db.h"
#include "policy.h"
#include "sim.h"

#define MAX_ROUNDS 1000

struct timing {
	int n;                 /* rounds measured */
	double cpu[MAX_ROUNDS];
	double wall[MAX_ROUNDS];
	int active[MAX_ROUNDS];
};

static struct timing timing;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int timed_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
	int rc = hb_arbiter_pollux.on_round(sim, state, err), active = 0;

	if (timing.n < MAX_ROUNDS) {
		for (int j = 0; j < sim->njobs; j++)
			active += sim->jobs[j].state != HB_JOB_DONE;
		timing.cpu[timing.n] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		timing.wall[timing.n] = clock_s(CLOCK_MONOTONIC) - w0;
		timing.active[timing.n] = active;
		timing.n++;
	}
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const models[] = { "imagenet", "yolov3", "deepspeech2", "bert", "cifar10" };
	struct hb_catalog cat;
	struct hb_profdb *db;
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_arbiter_ops arb = hb_arbiter_pollux;
	struct hb_error err = { 0 };
	int rounds = argc > 1 ? atoi(argv[1]) : 60, full = 0;
	double cpu = 0, wall = 0, sorted[MAX_ROUNDS], wmax = 0;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 60;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	hb_sim_opts_default(&o);
	o.seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	o.quiet = 1;
	o.restart_const_s = 30.0;
	o.max_sim_s = 60.0 * rounds + 30.0;
	if (hb_sim_init(&sim, &cat, hb_catalog_cluster(&cat, "pollux-t4"), db, "pollux", &o, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	arb.on_round = timed_round;
	hb_sim_set_arbiter(&sim, &arb);
	for (int j = 0; j < 20; j++) {
		const struct hb_model *m = hb_catalog_model(&cat, models[j % 5]);

		if (hb_sim_add_job(&sim, m, &hb_agent_pollux, 0.0, NULL, &err) < 0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			return 1;
		}
	}
	/* Stopped by max_sim_s: that error is the expected end. */
	if (hb_sim_run(&sim, &err) < 0 && strstr(err.msg, "did not finish") == NULL) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	for (int k = 0; k < timing.n; k++) {
		if (timing.active[k] != 20)
			continue;
		cpu += timing.cpu[k];
		wall += timing.wall[k];
		wmax = fmax(wmax, timing.cpu[k]);
		sorted[full++] = timing.cpu[k];
	}
	qsort(sorted, (size_t)full, sizeof(double), cmp_double);
	if (full > 0)
		printf("pollux round, 20 jobs on pollux-t4 (64 GPUs): %d rounds, CPU mean %.1f ms, median %.1f ms, "
		       "max %.1f ms; wall mean %.1f ms\n",
		       full, 1e3 * cpu / full, 1e3 * sorted[full / 2], 1e3 * wmax, 1e3 * wall / full);
	hb_sim_free(&sim);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return full > 0 ? 0 : 1;
}
