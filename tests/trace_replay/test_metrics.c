/* sim/results/metrics.c and sim/replay.c: distributions on known JCTs, the
 * utilisation integral on known intervals, GPUs-held stretches rebuilt from
 * hand-written records (preemption and resumption at one instant), J_avg by
 * hand and against a brute-force O(n^2) oracle, rho on a case solved by
 * separate simulations, the per-policy and per-model summaries on a
 * hand-built finished simulation, and the replay's model draws, skips and
 * load scaling. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "default_db.h"
#include "metrics.h"
#include "policy.h"
#include "replay.h"
#include "rng.h"
#include "sim.h"

#define TOL 1e-9

/* |a - b| <= tol (cmocka 1.1 has no double comparison) */
#define assert_near(a, b, tol)                                                                          \
	do {                                                                                            \
		double a_ = (a), b_ = (b);                                                              \
		if (!(fabs(a_ - b_) <= (tol)))                                                          \
			fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, (double)(tol)); \
	} while (0)

static struct hb_catalog cat;        /* built-in, for the simulations */
static struct hb_profdb *db;
static const struct hb_cluster *qs;  /* jabas-quickstart: 4 V100 + 4 P100 */
static const struct hb_model *short_model;

/* ---- distributions ------------------------------------------------------------------ */

static void test_dist_known_values(void **state)
{
	double x[101];
	struct hb_dist d;
	struct hb_error err = { 0 };

	(void)state;
	/* 100..1 in reverse order plus a NaN, which is left out */
	for (int i = 0; i < 100; i++)
		x[i] = 100 - i;
	x[100] = NAN;
	assert_int_equal(hb_metrics_dist(x, 101, &d, &err), 0);
	assert_int_equal(d.n, 100);
	assert_near(d.mean, 50.5, TOL);
	assert_near(d.median, 50.5, TOL);
	/* linear interpolation: position 0.99 x 99 = 98.01 -> 99 + 0.01 */
	assert_near(d.p99, 99.01, TOL);
	assert_near(d.max, 100.0, TOL);
	assert_near(x[0], 100.0, 0); /* input untouched */

	/* three JCTs: 1 h, 2 h, 6 h */
	x[0] = 3600;
	x[1] = 7200;
	x[2] = 21600;
	assert_int_equal(hb_metrics_dist(x, 3, &d, &err), 0);
	assert_near(d.mean, 10800, TOL);
	assert_near(d.median, 7200, TOL);
	assert_near(d.p99, 7200 + 0.98 * 14400, 1e-6);
	assert_int_equal(hb_metrics_dist(x, 0, &d, &err), 0);
	assert_int_equal(d.n, 0);
	assert_true(isnan(d.mean) && isnan(d.p99));
}

/* ---- utilisation ----------------------------------------------------------------------- */

static void test_util_known_intervals(void **state)
{
	/* 8 GPUs, window [0, 100] s in 4 bins of 25 s */
	const struct hb_gpu_interval iv[] = {
		/* t0, t1, job, gpus, of them by GPU type slot */
		{ 0, 50, 0, 4, { 4 } },       /* 200 GPU-s */
		{ 25, 100, 1, 2, { 0, 2 } },  /* 150 */
		{ 60, 70, 2, 8, { 3, 5 } },   /* 80 */
		{ -10, 5, 3, 8, { 8 } },      /* 40 inside the window, 80 outside */
		{ 100, 200, 4, 8, { 0, 8 } }, /* outside */
	};
	struct hb_util_series u;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_metrics_util_from_intervals(iv, 5, 8, 0, 100, 4, &u, &err), 0);
	assert_int_equal(u.npoints, 4);
	assert_near(u.gpu_s, 470, TOL);
	assert_near(u.mean, 470.0 / 800.0, TOL);
	assert_near(u.t_s[0], 0, TOL);
	assert_near(u.t_s[3], 75, TOL);
	assert_near(u.util[0], (100 + 40) / 200.0, TOL);
	assert_near(u.util[1], (100 + 50) / 200.0, TOL);
	assert_near(u.util[2], (50 + 80) / 200.0, TOL);
	assert_near(u.util[3], 50 / 200.0, TOL);
	/* GPUs held by type: bin 2 ([50, 75)) holds job 1's 2 of slot 1 and,
	 * for 10 of 25 s, job 2's 3 + 5; the types sum to the GPUs held */
	assert_near(u.held[2 * HB_SIM_TYPE_SLOTS + 0], 3 * 10 / 25.0, TOL);
	assert_near(u.held[2 * HB_SIM_TYPE_SLOTS + 1], 2 + 5 * 10 / 25.0, TOL);
	for (int k = 0; k < u.npoints; k++) {
		double sum = 0;

		for (int s = 0; s < HB_SIM_TYPE_SLOTS; s++)
			sum += u.held[k * HB_SIM_TYPE_SLOTS + s];
		assert_near(sum, u.util[k] * 8, TOL);
	}
	hb_util_series_free(&u);

	/* the bins always integrate to the whole */
	assert_int_equal(hb_metrics_util_from_intervals(iv, 5, 8, 0, 100, 7, &u, &err), 0);
	{
		double sum = 0;

		for (int k = 0; k < u.npoints; k++)
			sum += u.util[k] * 8 * (100.0 / 7);
		assert_near(sum, 470, 1e-9);
	}
	hb_util_series_free(&u);

	/* an empty window has no series; a cluster without GPUs is an error */
	assert_int_equal(hb_metrics_util_from_intervals(iv, 5, 8, 10, 10, 4, &u, &err), 0);
	assert_int_equal(u.npoints, 0);
	assert_true(isnan(u.mean));
	hb_util_series_free(&u);
	assert_int_equal(hb_metrics_util_from_intervals(iv, 5, 0, 0, 10, 4, &u, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

/* ---- hand-built finished simulations --------------------------------------------------- */

static struct hb_model toys[2] = { { .name = "zeta" }, { .name = "alpha" } };
static struct hb_catalog toy_cat = { .models = toys, .nmodels = 2 };
static struct hb_cluster toy_cl = { .name = "toy", .ngpus = 8 };

static void fake_init(struct hb_sim *s, int njobs)
{
	memset(s, 0, sizeof(*s));
	s->cat = &toy_cat;
	s->cl = &toy_cl;
	s->policy = "toy";
	s->njobs = njobs;
	s->jobs = calloc((size_t)njobs, sizeof(*s->jobs));
	s->samples = calloc(64, sizeof(*s->samples));
	s->events = calloc(64, sizeof(*s->events));
	assert_true(s->jobs && s->samples && s->events);
}

static void fake_free(struct hb_sim *s)
{
	free(s->jobs);
	free(s->samples);
	free(s->events);
}

static void sample(struct hb_sim *s, double t, int job, int ngpus)
{
	struct hb_sim_sample *x = &s->samples[s->nsamples++];

	x->t = t;
	x->job = job;
	x->ngpus = ngpus;
}

static void event(struct hb_sim *s, double t, int job, const char *kind)
{
	struct hb_sim_event_rec *e = &s->events[s->nevents++];

	e->t = t;
	e->job = job;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
}

/* A done job: arrival a, first start st, finish f. */
static void done_job(struct hb_sim *s, int j, int model, double a, double st, double f)
{
	struct hb_sim_job *job = &s->jobs[j];

	job->id = j;
	snprintf(job->name, sizeof(job->name), "job%d", j);
	job->model = &toys[model];
	job->arrival_s = a;
	job->start_s = st;
	job->started = 1;
	job->state = HB_JOB_DONE;
	job->finish_s = f;
	job->t_last = f;
}

static void test_intervals_from_records(void **state)
{
	struct hb_sim s;
	struct hb_gpu_interval *iv;
	size_t n;
	struct hb_error err = { 0 };

	(void)state;
	fake_init(&s, 2);
	/* job 0: start 4 GPUs at 10, reconfig to 2 at 20 (an adaptation sample
	 * at 25 changes nothing), preempted at 30, resumed with 6 at 40; at 50
	 * a restart to 3 and a preemption at the same instant (the preemption
	 * last: it holds nothing), resumed with 5 at 60, done at 80 (the finish
	 * sample still says 5 GPUs). */
	done_job(&s, 0, 0, 0, 10, 80);
	/* job 1: start 8 at 0, preempted at 5 and resumed with 1 at 5 (the
	 * resumption last: it holds 1), done at 15 (the finish sample still
	 * says 1 GPU). */
	done_job(&s, 1, 1, 0, 0, 15);
	event(&s, 0, 1, "arrival");
	event(&s, 0, 0, "arrival");
	event(&s, 0, 1, "start");
	sample(&s, 0, 1, 8);
	event(&s, 5, 1, "preempt");
	event(&s, 5, 1, "restart");
	sample(&s, 5, 1, 1);
	event(&s, 10, 0, "start");
	sample(&s, 10, 0, 4);
	event(&s, 15, 1, "done");
	sample(&s, 15, 1, 1);
	event(&s, 20, 0, "reconfig");
	sample(&s, 20, 0, 2);
	sample(&s, 25, 0, 2);
	event(&s, 25, 0, "adapt");
	event(&s, 30, 0, "preempt");
	event(&s, 40, 0, "restart");
	sample(&s, 40, 0, 6);
	event(&s, 50, 0, "restart");
	sample(&s, 50, 0, 3);
	event(&s, 50, 0, "preempt");
	event(&s, 60, 0, "restart");
	sample(&s, 60, 0, 5);
	event(&s, 70, 0, "epoch");
	sample(&s, 80, 0, 5);
	event(&s, 80, 0, "done");

	assert_int_equal(hb_metrics_gpu_intervals(&s, &iv, &n, &err), 0);
	assert_int_equal(n, 6);
	/* job by job, in time order */
	assert_int_equal(iv[0].job, 0);
	assert_near(iv[0].t0_s, 10, 0);
	assert_near(iv[0].t1_s, 20, 0);
	assert_int_equal(iv[0].gpus, 4);
	assert_near(iv[1].t0_s, 20, 0);
	assert_near(iv[1].t1_s, 30, 0);
	assert_int_equal(iv[1].gpus, 2);
	assert_near(iv[2].t0_s, 40, 0);
	assert_near(iv[2].t1_s, 50, 0);
	assert_int_equal(iv[2].gpus, 6);
	assert_near(iv[3].t0_s, 60, 0);
	assert_near(iv[3].t1_s, 80, 0);
	assert_int_equal(iv[3].gpus, 5);
	assert_int_equal(iv[4].job, 1);
	assert_near(iv[4].t0_s, 0, 0);
	assert_near(iv[4].t1_s, 5, 0);
	assert_int_equal(iv[4].gpus, 8);
	assert_near(iv[5].t0_s, 5, 0);
	assert_near(iv[5].t1_s, 15, 0);
	assert_int_equal(iv[5].gpus, 1);
	free(iv);
	fake_free(&s);
}

static void test_summary_and_by_model(void **state)
{
	struct hb_sim s;
	struct hb_cluster_summary sum;
	struct hb_model_jct *rows;
	struct hb_rho_job rho[4];
	int n;
	struct hb_error err = { 0 };

	(void)state;
	fake_init(&s, 4);
	/* JCTs 1 h, 2 h, 6 h; queueing 0, 600, 1800 s; one job never started */
	done_job(&s, 0, 0, 0, 0, 3600);
	done_job(&s, 1, 1, 100, 700, 100 + 7200);
	done_job(&s, 2, 0, 200, 2000, 200 + 21600);
	s.jobs[3].id = 3;
	s.jobs[3].model = &toys[1];
	s.jobs[3].arrival_s = 300;
	s.jobs[3].state = HB_JOB_PENDING;
	s.jobs[3].t_last = 300;
	for (int j = 0; j < 4; j++) {
		s.jobs[j].gpu_s = 3600.0 * (j + 1);
		s.jobs[j].cost_usd = 1.5 * (j + 1);
		s.jobs[j].restarts = j;
		s.jobs[j].preemptions = j == 2;
		rho[j].rho = j < 3 ? 1.0 + j : NAN;
	}
	s.sched_rounds = 4;
	s.sched_wall_s = 0.002;

	hb_cluster_summary(&s, rho, NULL, &sum);
	assert_int_equal(sum.njobs, 4);
	assert_int_equal(sum.completed, 3);
	assert_int_equal(sum.unfinished, 1);
	assert_int_equal(sum.jct_s.n, 3);
	assert_near(sum.jct_s.mean, 10800, TOL);
	assert_near(sum.jct_s.median, 7200, TOL);
	assert_near(sum.jct_s.max, 21600, TOL);
	assert_int_equal(sum.queue_s.n, 3);
	assert_near(sum.queue_s.mean, 2400.0 / 3, TOL);
	assert_near(sum.first_arrival_s, 0, TOL);
	assert_near(sum.last_finish_s, 21800, TOL);
	assert_near(sum.makespan_s, 21800, TOL);
	assert_near(sum.gpu_hours, 10, TOL);
	assert_near(sum.cost_usd, 15, TOL);
	assert_near(sum.restarts_per_job, 1.5, TOL);
	assert_near(sum.preemptions_per_job, 0.25, TOL);
	assert_int_equal(sum.rho.n, 3);
	assert_near(sum.rho.median, 2, TOL);
	assert_near(sum.rho.max, 3, TOL);
	assert_near(sum.sched_ms_per_round, 0.5, 1e-12);
	assert_true(isnan(sum.util_mean));

	assert_int_equal(hb_metrics_by_model(&s, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].model, "alpha"); /* by name */
	assert_int_equal(rows[0].njobs, 2);
	assert_int_equal(rows[0].completed, 1);
	assert_near(rows[0].jct_mean_s, 7200, TOL);
	assert_string_equal(rows[1].model, "zeta");
	assert_int_equal(rows[1].njobs, 2);
	assert_near(rows[1].jct_mean_s, (3600 + 21600) / 2.0, TOL);
	assert_near(rows[1].jct_median_s, (3600 + 21600) / 2.0, TOL);
	free(rows);
	fake_free(&s);
}

/* ---- J_avg ------------------------------------------------------------------------------ */

static void test_javg_by_hand(void **state)
{
	const double a[] = { 0, 0, 5, 3 }, f[] = { 10, 20, 15, NAN };
	double j[4];
	struct hb_error err = { 0 };

	(void)state;
	/* job 3 never finishes: active from 3 s on for the others, no J_avg */
	assert_int_equal(hb_metrics_javg(a, f, 4, j, &err), 0);
	/* job 0 [0,10): 2 on [0,3), 3 on [3,5), 4 on [5,10) */
	assert_near(j[0], (2 * 3 + 3 * 2 + 4 * 5) / 10.0, TOL);
	/* job 1 [0,20): 2, 3, 4 on [5,10), 3 on [10,15), 2 on [15,20) */
	assert_near(j[1], (2 * 3 + 3 * 2 + 4 * 5 + 3 * 5 + 2 * 5) / 20.0, TOL);
	/* job 2 [5,15): 4 on [5,10), 3 on [10,15) */
	assert_near(j[2], (4 * 5 + 3 * 5) / 10.0, TOL);
	assert_true(isnan(j[3]));
}

static void test_javg_against_brute_force(void **state)
{
	enum { N = 300 };
	double a[N], f[N], j[N];
	struct hb_rng rng;
	struct hb_error err = { 0 };

	(void)state;
	hb_rng_seed(&rng, 11, HB_STREAM_DEFAULT);
	for (int i = 0; i < N; i++) {
		/* integer times make ties (arrival == another's finish) common */
		a[i] = (double)hb_rng_below(&rng, 500);
		f[i] = hb_rng_below(&rng, 10) == 0 ? NAN : a[i] + 1 + (double)hb_rng_below(&rng, 200);
	}
	assert_int_equal(hb_metrics_javg(a, f, N, j, &err), 0);
	for (int i = 0; i < N; i++) {
		double s = 0;

		if (isnan(f[i])) {
			assert_true(isnan(j[i]));
			continue;
		}
		/* sum of overlaps of [a_i, f_i) with every [a_k, f_k) */
		for (int k = 0; k < N; k++) {
			double hi = isnan(f[k]) ? INFINITY : f[k];
			double lo2 = fmax(a[i], a[k]), hi2 = fmin(f[i], hi);

			if (hi2 > lo2)
				s += hi2 - lo2;
		}
		assert_near(j[i], s / (f[i] - a[i]), 1e-9 * N);
		assert_true(j[i] >= 1.0 - 1e-12);
	}
}

/* ---- simulations on jabas-quickstart ---------------------------------------------------- */

static void sim_init(struct hb_sim *sim, const struct hb_arbiter_ops *arb)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.restart_const_s = 60.0;
	if (hb_sim_init(sim, &cat, qs, db, "fifo", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, arb);
}

static int add(struct hb_sim *sim, double t, int gpus)
{
	struct hb_error err = { 0 };
	int id;

	if (hb_sim_add_job(sim, short_model, &hb_agent_static, t, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim->jobs[id], gpus, 256);
	return id;
}

/* JCT of the job alone on n GPUs of an empty cluster (the oracle of rho). */
static double alone(int n)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	double jct;

	sim_init(&sim, &hb_arbiter_fifo);
	add(&sim, 0.0, n);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	jct = sim.jobs[0].finish_s;
	hb_sim_free(&sim);
	return jct;
}

static void test_rho_alone_is_one(void **state)
{
	struct hb_sim sim;
	struct hb_rho_job r[1];
	struct hb_rho_stats st;
	struct hb_error err = { 0 };

	(void)state;
	sim_init(&sim, &hb_arbiter_fifo);
	add(&sim, 100.0, 8);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_metrics_rho(&sim, 0, r, &st, &err), 0);
	assert_near(r[0].javg, 1.0, TOL);
	assert_int_equal(r[0].ref_gpus, 8);
	assert_near(r[0].rho, 1.0, 1e-9);
	assert_int_equal(st.ref_runs, 1);
	assert_int_equal(st.failed, 0);
	hb_sim_free(&sim);
}

/* Two identical jobs at t = 0, each asking for the whole cluster: FIFO runs
 * A on [0, T] and B on [T, 2T], so J_avg(A) = 2 (share 4 GPUs) and
 * J_avg(B) = (2T + T) / 2T = 1.5 (share round(8 / 1.5) = 5 GPUs). */
static void test_rho_two_jobs_in_a_row(void **state)
{
	struct hb_sim sim;
	struct hb_rho_job r[2];
	struct hb_rho_stats st;
	struct hb_error err = { 0 };
	double T, t4 = alone(4), t5 = alone(5), t8 = alone(8);

	(void)state;
	sim_init(&sim, &hb_arbiter_fifo);
	add(&sim, 0.0, 8);
	add(&sim, 0.0, 8);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	T = sim.jobs[0].finish_s;
	assert_near(T, t8, 1e-9 * T);
	assert_near(sim.jobs[1].finish_s, 2 * T, 1e-9 * T);
	assert_int_equal(hb_metrics_rho(&sim, 0, r, &st, &err), 0);
	assert_near(r[0].javg, 2.0, 1e-12);
	assert_near(r[1].javg, 1.5, 1e-12);
	assert_int_equal(r[0].ref_gpus, 4);
	assert_int_equal(r[1].ref_gpus, 5);
	assert_near(r[0].ref_jct_s, t4, 1e-9 * t4);
	assert_near(r[1].ref_jct_s, t5, 1e-9 * t5);
	assert_near(r[0].rho, T / t4, 1e-9);
	assert_near(r[1].rho, 2 * T / t5, 1e-9);
	/* fewer GPUs alone take longer, so A's rho is below 1; B waited */
	assert_true(r[0].rho < 1.0);
	assert_true(r[1].rho > 1.0);
	assert_int_equal(st.ref_runs, 2);
	hb_sim_free(&sim);
}

/* A scripted arbiter that preempts job 0 in round 1 and gives it half the
 * cluster in round 2: the stretches from the records integrate to the GPU
 * time the simulator billed. */
static int script_round_no(const struct hb_sim *sim)
{
	return (int)sim->sched_rounds + 1; /* counted after the round returns */
}

static int script_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int g[2] = { 0, 0 };

	(void)state;
	if (!hb_sim_place(sim, job->req_gpus, g))
		return 0; /* waits for a round */
	return hb_sim_start_job(sim, job, g, err);
}

static double script_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return 120.0;
}

static int script_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	int none[2] = { 0, 0 }, g[2] = { 0, 0 };
	int round = script_round_no(sim);

	(void)state;
	if (round == 1 && sim->jobs[0].state != HB_JOB_DONE)
		return hb_sim_regrant(sim, &sim->jobs[0], none, err);
	if (round == 2 && sim->jobs[0].state == HB_JOB_SUSPENDED && hb_sim_place(sim, 4, g))
		return hb_sim_regrant(sim, &sim->jobs[0], g, err);
	/* t_last > 0: arrived (every job but the first arrives after t = 0) */
	for (int j = 0; j < sim->njobs; j++)
		if (sim->jobs[j].state == HB_JOB_PENDING && sim->jobs[j].t_last > 0 &&
		    hb_sim_place(sim, sim->jobs[j].req_gpus, g) && hb_sim_start_job(sim, &sim->jobs[j], g, err) < 0)
			return -1;
	return 0;
}

static const struct hb_arbiter_ops script_arbiter = {
	.name = "script", .summary = "test", .on_arrival = script_arrival,
	.round_s = script_round_s, .on_round = script_round,
};

static void check_integral(const struct hb_sim *sim)
{
	struct hb_util_series u;
	struct hb_error err = { 0 };
	double billed = 0;

	for (int j = 0; j < sim->njobs; j++)
		billed += sim->jobs[j].gpu_s;
	assert_int_equal(hb_metrics_utilisation(sim, 50, &u, &err), 0);
	assert_int_equal(u.npoints, 50);
	assert_near(u.gpu_s, billed, 1e-9 * billed);
	assert_true(u.mean > 0 && u.mean <= 1.0 + 1e-12);
	for (int k = 0; k < u.npoints; k++)
		assert_true(u.util[k] >= 0 && u.util[k] <= 1.0 + 1e-12);
	hb_util_series_free(&u);
}

static void test_util_integral_matches_billing(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	/* FIFO with queueing */
	sim_init(&sim, &hb_arbiter_fifo);
	add(&sim, 0.0, 4);
	add(&sim, 10.0, 8);
	add(&sim, 20.0, 2);
	add(&sim, 5000.0, 3);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	check_integral(&sim);
	hb_sim_free(&sim);

	/* preemption, resumption on other GPUs, jobs started in rounds */
	sim_init(&sim, &script_arbiter);
	add(&sim, 0.0, 8);
	add(&sim, 100.0, 2);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(sim.jobs[0].preemptions, 1);
	assert_true(sim.jobs[0].restarts >= 1);
	assert_true(sim.sched_rounds >= 2);
	check_integral(&sim);
	hb_sim_free(&sim);
}

/* ---- replay --------------------------------------------------------------------------- */

static void spec(struct hb_jobspec *s, const char *name, double t, const char *model, int gpus, double gpu_h,
		 long record)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->arrival_s = t;
	snprintf(s->model, sizeof(s->model), "%s", model);
	s->gpus = gpus;
	s->gpu_time_s = gpu_h * 3600.0;
	s->record = record;
}

static void test_replay_models_skips_and_load(void **state)
{
	struct hb_jobspec s[5];
	struct hb_replay rp, rp2;
	struct hb_replay_opts ro;
	struct hb_error err = { 0 };
	struct hb_sim sim;

	(void)state;
	spec(&s[0], "a", 100, "resnet50", 4, 0, 2);
	spec(&s[1], "b", 200, "", 2, 0.5, 3);   /* small: cifar10 or ncf */
	spec(&s[2], "c", 300, "", 9, 0, 4);     /* larger than the cluster */
	spec(&s[3], "d", 400, "", 1, 50, 5);    /* large: yolov3 */
	spec(&s[4], "e", 500, "", 8, 500, 6);   /* xlarge: imagenet */
	hb_replay_opts_init(&ro);
	ro.load = 2.0;
	ro.seed = 5;
	assert_int_equal(hb_replay_from_specs(&cat, qs, s, 5, HB_TRACE_PHILLY_CSV, "t.csv", &ro, &rp, &err), 0);
	assert_int_equal(rp.read, 5);
	assert_int_equal(rp.njobs, 4);
	assert_int_equal(rp.oversize, 1);
	assert_int_equal(rp.max_oversize_gpus, 9);
	assert_int_equal(rp.assigned, 4);
	assert_string_equal(rp.jobs[0].model->name, "resnet50");
	assert_false(rp.jobs[0].assigned);
	assert_true(strcmp(rp.jobs[1].model->name, "cifar10") == 0 || strcmp(rp.jobs[1].model->name, "ncf") == 0);
	assert_true(rp.jobs[1].assigned);
	assert_string_equal(rp.jobs[2].model->name, "yolov3");
	assert_string_equal(rp.jobs[3].model->name, "imagenet");
	assert_near(rp.jobs[0].arrival_s, 50, 0);
	assert_near(rp.jobs[3].arrival_s, 250, 0);
	assert_int_equal(rp.jobs[3].record, 6);

	/* the same seed draws the same models */
	assert_int_equal(hb_replay_from_specs(&cat, qs, s, 5, HB_TRACE_PHILLY_CSV, "t.csv", &ro, &rp2, &err), 0);
	for (int k = 0; k < 4; k++)
		assert_ptr_equal(rp.jobs[k].model, rp2.jobs[k].model);
	hb_replay_free(&rp2);

	/* into a simulation: names, requests, arrivals */
	sim_init(&sim, &hb_arbiter_fifo);
	assert_int_equal(hb_replay_build(&sim, &rp, &hb_agent_static, "t.csv", &err), 0);
	assert_int_equal(sim.njobs, 4);
	assert_string_equal(sim.jobs[0].name, "a");
	assert_int_equal(sim.jobs[0].req_gpus, 4);
	assert_int_equal(sim.jobs[0].req_batch, 0);
	assert_near(sim.jobs[2].arrival_s, 200, 0);
	hb_sim_free(&sim);
	hb_replay_free(&rp);

	/* an unknown model names the record */
	spec(&s[1], "b", 200, "resnet9000", 2, 0, 3);
	assert_int_equal(hb_replay_from_specs(&cat, qs, s, 5, HB_TRACE_JOBSPEC_CSV, "t.csv", &ro, &rp, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "t.csv:3: field 'model': value 'resnet9000'"));
	assert_null(rp.jobs);
	assert_int_equal(hb_replay_from_specs(&cat, qs, s, 5, HB_TRACE_JOBSPEC_JSON, "t.json", &ro, &rp, &err), -1);
	assert_non_null(strstr(err.msg, "t.json: element 3: field 'model'"));
	ro.load = 0;
	assert_int_equal(hb_replay_from_specs(&cat, qs, s, 1, HB_TRACE_JOBSPEC_CSV, "t.csv", &ro, &rp, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };
	int k;

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	qs = hb_catalog_cluster(&cat, "jabas-quickstart");
	k = (int)(hb_catalog_model(&cat, "resnet50") - cat.models);
	cat.models[k].target_epochs = 1; /* short jobs */
	short_model = &cat.models[k];
	return qs ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dist_known_values),
		cmocka_unit_test(test_util_known_intervals),
		cmocka_unit_test(test_intervals_from_records),
		cmocka_unit_test(test_summary_and_by_model),
		cmocka_unit_test(test_javg_by_hand),
		cmocka_unit_test(test_javg_against_brute_force),
		cmocka_unit_test(test_rho_alone_is_one),
		cmocka_unit_test(test_rho_two_jobs_in_a_row),
		cmocka_unit_test(test_util_integral_matches_billing),
		cmocka_unit_test(test_replay_models_skips_and_load),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
