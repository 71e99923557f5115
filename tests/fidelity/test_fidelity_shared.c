/* Pollux fidelity on the published Pollux data ($HB_SHARED/data/pollux,
 * read in place; exit 77 when absent):
 *  - the statistical epochs, gains and remaining iterations of an imported
 *    application equal what the artifact's applications.py computes
 *    (values printed by Application.get_progress, get_grad_stats and
 *    get_iteration of petuum/adaptdl osdi21-artifact c793c70);
 *  - step times of unmeasured placements equal the artifact's
 *    get_throughput, i.e. scipy's LinearNDInterpolator over its points;
 *  - `hetbatch sim --fidelity pollux` on workloads 1-4 agrees with the
 *    artifact job by job for Tiresias and Optimus (its per-job results in
 *    scripts/repro/pollux-artifact/jobs.csv): at least 95 % of the 640 jobs
 *    within 2 % of the artifact's JCT and each workload's mean within 1 %. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "catalog.h"
#include "cli_run.h"
#include "csv.h"
#include "fidelity.h"
#include "import.h"
#include "perf_measured.h"
#include "profdb.h"

static char shared[1024], dbpath[1024];
static struct hb_catalog cat;
static struct hb_profdb *db;

static int setup(void **state)
{
	struct hb_error err = { 0 };
	struct hb_import_stats st;
	char dir[1200];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/data/pollux/profiles", shared);
	snprintf(dbpath, sizeof(dbpath), "%s/t4.db", tmpdir);
	/* The analytic T4 rows the simulator's perf model needs, then the
	 * artifact's measurements over them (what scripts/repro/pollux-sim does). */
	assert_int_equal(run("-q profile --analytic --db '%s' --gpus t4", dbpath), 0);
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_profdb_open(dbpath, 0, &db, &err), 0);
	memset(&st, 0, sizeof(st));
	if (hb_import_pollux(db, &cat, dir, &st, &err) < 0)
		fail_msg("%s", err.msg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return 0;
}

static void close_rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fabs(want)))
		fail_msg("got %.17g, want %.17g (relative tolerance %g)", got, want, tol);
}

static void test_epochs_and_gain(void **state)
{
	struct hb_fid_model f;
	struct hb_error err = { 0 };

	(void)state;
	if (hb_fid_model_load(&f, db, hb_catalog_model(&cat, "cifar10"), &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(f.max_epochs, 100);
	assert_true(f.m0 == 128);
	close_rel(f.bound[1], 390.7143859664223, 1e-12);
	close_rel(f.bound[100], 39062.908166595334, 1e-12);
	close_rel(hb_fid_gain(&f, 2052, 0), 1.4651512882631226, 1e-12);
	close_rel(hb_fid_gain(&f, 3000, 57), 21.370079551002373, 1e-12);
	close_rel(hb_fid_iterations(&f, 2048, 99), 3178, 1e-12);
	close_rel(hb_fid_iterations(&f, 2048, 10), 710, 1e-12);
	close_rel(hb_fid_iterations(&f, 3000, 99), 2635.52734375, 1e-12);
	/* phi behind the gain: the gain formula with it is Pollux's E(B) B / M0. */
	{
		double phi = hb_fid_phi(&f, 3000, 57), e = (phi + 128) / (phi + 3000);

		close_rel(e * 3000 / 128, hb_fid_gain(&f, 3000, 57), 1e-12);
	}
	hb_fid_model_free(&f);
	/* A model without validation runs is refused by name. */
	assert_int_equal(hb_fid_model_load(&f, db, hb_catalog_model(&cat, "resnet50"), &err), -1);
	assert_non_null(strstr(err.msg, "'resnet50' has no gradient statistics"));
}

static void step_is(const struct hb_perf_measured *m, const int *counts, int n, int local_bs, double step, double sync)
{
	double t0, t1;

	assert_int_equal(hb_perf_measured_step(m, counts, n, local_bs, 0, &t0), 1);
	assert_int_equal(hb_perf_measured_step(m, counts, n, local_bs, 1, &t1), 1);
	close_rel(t0, step, 1e-9);
	close_rel(t0 - (t1 - t0), sync, 1e-6);
}

static void test_step_times(void **state)
{
	struct hb_perf_measured *m = NULL;
	struct hb_error err = { 0 };
	static const int p6[] = { 4, 4, 4, 4, 4, 4 }, p9[] = { 2, 2, 4, 4, 4, 4, 4, 4, 4 }, p5[] = { 1, 4, 4, 3, 3 },
			 p14[] = { 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 4 }, ds[] = { 1, 1, 1, 1, 1 };

	(void)state;
	assert_int_equal(hb_perf_measured_load(db, "imagenet", "t4", &m, &err), 0);
	assert_non_null(m);
	assert_null(m->nd); /* only the fidelity mode triangulates, */
	assert_int_equal(hb_perf_measured_use_artifact(m, &err), 0);
	assert_null(m->nd); /* and only when a lookup needs it */
	assert_non_null(hb_perf_measured_nd(m));
	assert_ptr_equal(hb_perf_measured_nd(m), m->nd);
	step_is(m, p6, 6, 134, 0.74533214221398048, 0.059926544268925977);
	step_is(m, p9, 9, 107, 0.68334568879183588, 0.12669123025781967);
	step_is(m, p5, 5, 178, 0.92609612748429582, 0.073654865641207309);
	step_is(m, p14, 14, 146, 0.84163030485312129, 0.13093809944788615);
	hb_perf_measured_free(m);
	assert_int_equal(hb_perf_measured_load(db, "deepspeech2", "t4", &m, &err), 0);
	assert_int_equal(hb_perf_measured_use_artifact(m, &err), 0);
	step_is(m, ds, 5, 40, 1.3317044600844383, 0.18833681213855741);
	hb_perf_measured_free(m);
}

/* JCT per job name of one policy in a jobs.csv (ours: name, policy, jct_s;
 * the artifact's: job, policy, jct_s, workload w only). */
struct jct {
	char name[64];
	double jct;
};

static int load_jcts(const char *path, const char *policy, int artifact, int w, struct jct *out, int max)
{
	static const char *const ours[] = { "name", "policy", "jct_s", NULL };
	static const char *const theirs[] = { "job", "policy", "jct_s", "workload", NULL };
	struct hb_csv c;
	struct hb_error err = { 0 };
	int idx[4], n = 0, rc;
	char ws[16];

	snprintf(ws, sizeof(ws), "%d", w);
	if (hb_csv_open(&c, path, &err) < 0 || hb_csv_header(&c, artifact ? theirs : ours, idx, &err) < 0)
		fail_msg("%s", err.msg);
	while ((rc = hb_csv_next(&c, &err)) == 1) {
		if (strcmp(c.field[idx[1]], policy) != 0 || (artifact && strcmp(c.field[idx[3]], ws) != 0))
			continue;
		assert_true(n < max);
		snprintf(out[n].name, sizeof(out[n].name), "%s", c.field[idx[0]]);
		out[n].jct = atof(c.field[idx[2]]);
		n++;
	}
	assert_int_equal(rc, 0);
	hb_csv_close(&c);
	return n;
}

/* A field of one job (policy, name) in our jobs.csv, as a number. */
static double job_field(const char *path, const char *policy, const char *name, const char *field)
{
	const char *cols[] = { "policy", "name", field, NULL };
	struct hb_csv c;
	struct hb_error err = { 0 };
	int idx[3], rc;
	double v = NAN;

	if (hb_csv_open(&c, path, &err) < 0 || hb_csv_header(&c, cols, idx, &err) < 0)
		fail_msg("%s", err.msg);
	while ((rc = hb_csv_next(&c, &err)) == 1)
		if (strcmp(c.field[idx[0]], policy) == 0 && strcmp(c.field[idx[1]], name) == 0)
			v = atof(c.field[idx[2]]);
	assert_int_equal(rc, 0);
	hb_csv_close(&c);
	if (isnan(v))
		fail_msg("%s: no %s job %s", path, policy, name);
	return v;
}

static void test_sim_against_artifact(void **state)
{
	static const char *const policies[] = { "tiresias", "optimus" };
	char ours[1200], theirs[1200];
	const char *root = getenv("HB_SOURCE_ROOT");
	struct jct *a = calloc(200, sizeof(*a)), *h = calloc(200, sizeof(*h));
	int within[2] = { 0, 0 };

	(void)state;
	assert_non_null(root);
	snprintf(theirs, sizeof(theirs), "%s/scripts/repro/pollux-artifact/jobs.csv", root);
	for (int w = 1; w <= 4; w++) {
		assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s/data/pollux/workloads/workload-%d.csv' "
				     "--db '%s' --no-fairness --fidelity pollux --policy tiresias,optimus --out w%d",
				     shared, w, dbpath, w),
				 0);
		snprintf(ours, sizeof(ours), "%s/w%d/jobs.csv", tmpdir, w);
		if (w == 1) {
			char *sum;
			size_t len;

			/* To the second, as the artifact logged them: the first job
			 * starts at the 120 s round, pays the 30 s rescale, runs 100
			 * statistical epochs at B 2052 (342 x 6) and ends at 1060; a
			 * job submitted at 1740, a round's time, starts in it. */
			assert_true(job_field(ours, "tiresias", "cifar10-0", "start_s") == 120);
			assert_true(job_field(ours, "tiresias", "cifar10-0", "jct_s") == 953);
			assert_true(job_field(ours, "tiresias", "cifar10-0", "final_gbs") == 2052);
			assert_true(job_field(ours, "tiresias", "deepspeech2-1", "jct_s") == 4182);
			assert_true(job_field(ours, "tiresias", "cifar10-13", "start_s") == 1740);
			/* The mode and what it implies are stored with the results. */
			sum = slurp_in("w1", "summary.json", &len);
			assert_non_null(strstr(sum, "\"fidelity\":\t\"pollux\""));
			assert_non_null(strstr(sum, "\"progress\":\t\"pollux-artifact\""));
			assert_non_null(strstr(sum, "\"restart_cost_s\":\t30,"));
			assert_non_null(strstr(sum, "\"reconfig_cost_s\":\t0,"));
			assert_non_null(strstr(sum, "\"gns_overhead\":\t0,"));
			free(sum);
		}
		for (int p = 0; p < 2; p++) {
			int na = load_jcts(theirs, policies[p], 1, w, a, 200);
			int nh = load_jcts(ours, policies[p], 0, 0, h, 200);
			double sa = 0, sh = 0;

			assert_int_equal(na, 160);
			assert_int_equal(nh, 160);
			for (int i = 0; i < nh; i++) {
				int k = 0;

				while (k < na && strcmp(a[k].name, h[i].name) != 0)
					k++;
				assert_true(k < na);
				within[p] += fabs(h[i].jct - a[k].jct) <= 0.02 * a[k].jct;
				sa += a[k].jct;
				sh += h[i].jct;
			}
			print_message("workload %d %s: mean JCT %.1f s, artifact %.1f s\n", w, policies[p], sh / nh,
				      sa / na);
			assert_true(fabs(sh / sa - 1.0) <= 0.01);
		}
	}
	for (int p = 0; p < 2; p++) {
		print_message("%s: %d of 640 jobs within 2 %% of the artifact\n", policies[p], within[p]);
		assert_true(within[p] >= 608);
	}
	free(a);
	free(h);
}

/* PolluxSched under fidelity: NCF runs at the artifact's pinned batch on
 * one GPU; every job still completes. */
static void test_pollux_ncf_pinned(void **state)
{
	char ours[1200];

	(void)state;
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s/data/pollux/workloads/workload-1.csv' --db '%s' "
			     "--no-fairness --fidelity pollux --policy pollux --max-jobs 12 --out px",
			     shared, dbpath),
			 0);
	snprintf(ours, sizeof(ours), "%s/px/jobs.csv", tmpdir);
	assert_true(job_field(ours, "pollux", "ncf-2", "mean_gbs") == 32768);
	assert_true(job_field(ours, "pollux", "ncf-5", "final_gbs") == 32768);
	/* One GPU for its whole run: GPU-hours = JCT less nothing held before start. */
	assert_true(job_field(ours, "pollux", "ncf-2", "gpu_hours") * 3600 <=
		    job_field(ours, "pollux", "ncf-2", "finish_s") - job_field(ours, "pollux", "ncf-2", "start_s") + 1e-6);
}

/* Sia fidelity's split of a fixed batch (job.py Job.update_local_bsz, no
 * batch tuning), worked out here from the imported rows as the artifact
 * does it, against what gavel-tput's jobs run: one job at a time on empty
 * T4 nodes (one node, or two whole ones), so each placement is known. */
static void test_sia_fixed_batch(void **state)
{
	static const struct {
		int k;
		long b;
	} job[] = { { 1, 128 }, { 1, 512 }, { 2, 1000 }, { 4, 2048 }, { 3, 4096 }, { 8, 4096 }, { 4, 600 } };
	const int nj = (int)(sizeof(job) / sizeof(job[0]));
	struct hb_perf_measured *m = NULL;
	struct hb_fid_model f;
	struct hb_error err = { 0 };
	char path[1200], ours[1200];
	FILE *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/fixed.csv", tmpdir);
	assert_non_null(t = fopen(path, "w"));
	fprintf(t, "name,time,application,num_replicas,batch_size\n");
	for (int i = 0; i < nj; i++)
		fprintf(t, "cifar10-%d,%d,cifar10,%d,%ld\n", i, 100000 * i, job[i].k, job[i].b);
	fclose(t);
	assert_int_equal(run("-q sim --cluster pollux-t4 --trace '%s' --db '%s' --no-fairness --fidelity sia "
			     "--policy gavel-tput --out sf",
			     path, dbpath),
			 0);
	snprintf(ours, sizeof(ours), "%s/sf/jobs.csv", tmpdir);
	assert_int_equal(hb_perf_measured_load(db, "cifar10", "t4", &m, &err), 0);
	assert_non_null(m);
	assert_int_equal(hb_fid_model_load(&f, db, hb_catalog_model(&cat, "cifar10"), &err), 0);
	for (int i = 0; i < nj; i++) {
		int counts[2] = { job[i].k < 4 ? job[i].k : 4, job[i].k > 4 ? job[i].k - 4 : 0 };
		long k = job[i].k, local = (job[i].b + k - 1) / k, max_local, accum, atomic, cap, max_b;
		char name[32];

		max_local = hb_perf_measured_max_local(m, counts, 2, HB_PLACE_DESCENDING);
		assert_true(max_local > 0);
		accum = (local + max_local - 1) / max_local - 1;
		if (k == 1 && job[i].b > (long)f.m0 && accum < 1)
			accum = 1;
		atomic = (local + accum) / (accum + 1);
		cap = hb_perf_measured_max_local_replicas(m, (int)k);
		if (cap > 0 && atomic > cap)
			atomic = cap;
		max_b = f.runs[f.nruns - 1].batch;
		if (atomic > max_b / (k * (accum + 1)))
			atomic = max_b / (k * (accum + 1));
		snprintf(name, sizeof(name), "cifar10-%d", i);
		if (job_field(ours, "gavel-tput", name, "final_gbs") != (double)(k * atomic * (accum + 1)))
			fail_msg("%s (%ld GPUs, B %ld): B %g, the artifact's %ld x %ld x %ld", name, k, job[i].b,
				 job_field(ours, "gavel-tput", name, "final_gbs"), atomic, k, accum + 1);
	}
	hb_fid_model_free(&f);
	hb_perf_measured_free(m);
}

int main(void)
{
	const char *s = getenv("HB_SHARED");
	struct stat sb;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_epochs_and_gain),
		cmocka_unit_test(test_step_times),
		cmocka_unit_test(test_sim_against_artifact),
		cmocka_unit_test(test_pollux_ncf_pinned),
		cmocka_unit_test(test_sia_fixed_batch),
	};
	int rc;

	if (!s)
		return 77;
	snprintf(shared, sizeof(shared), "%s", s);
	{
		char dir[1200];

		snprintf(dir, sizeof(dir), "%s/data/pollux/profiles", shared);
		if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return 77;
	}
	if (cli_setup("fidelity") < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, setup, teardown);
	cli_teardown();
	return rc;
}
