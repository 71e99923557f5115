/* EasyScale fidelity mode (sim --fidelity easyscale, sim/policies/
 * easyscale_artifact.h), each mechanic against the artifact's simulator
 * (sUntvoOk/EasyScale_info_for_SC23, simulator/):
 *  - easy_policy.py Intrajob.waste, by hand;
 *  - Intrajob.get_perf_candidates + combinationSum + _convert_to_final_proposals:
 *    the plan database against a brute-force enumeration of what they define;
 *  - simulator.py Job.get_placement_proposals' filters, Application.get_comp_time;
 *  - the workload reader (simulator.py Cluster.__init__'s columns) on
 *    malformed rows, D2 as Python's bool(), a repeated name as the OrderedDict;
 *  - the timeline of other_policy.py FifoPolicy + simulator.py Job.step
 *    (60 s rounds, 20 s before the first step, one job at a time), by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "es_artifact.h"
#include "jobspec.h"
#include "rng.h"

static char tmpdir[256];

/* ---- Intrajob.waste ------------------------------------------------------------ */

static void test_waste_by_hand(void **state)
{
	/* BERT's relative speeds ([A] overhead.csv: T4 0.6811 s over V100
	 * 0.4413 s and P100 0.6069 s), m = 1, ESTs (2, 1, 1), 2 V100 + 2 T4,
	 * maxP 6: s = max(2 / 1.5434, 1 / 1); per GPU theory - a / s; no spare
	 * EST; over the theory's 2 x 1.5434 + 2 x 1. */
	double perf[3] = { 0.6811 / 0.4413, 0.6811 / 0.6069, 1.0 };
	int a[3] = { 2, 1, 1 }, n[3] = { 2, 0, 2 }, thr[3];
	double s = fmax(2 / perf[0], 1 / perf[2]);
	double want = (2 * (perf[0] - 2 / s) + 2 * (perf[2] - 1 / s)) / (2 * perf[0] + 2 * perf[2]);
	double w = hb_esa_waste(perf, a, n, 3, 6, thr);

	(void)state;
	assert_true(fabs(w - want) < 1e-12);
	/* the candidate's ESTs are kept for every type, even P100 with no GPU */
	assert_int_equal(thr[0], 2);
	assert_int_equal(thr[1], 1);
	assert_int_equal(thr[2], 1);
	/* spare ESTs: maxP 5 charges (6 - 5) / s more */
	assert_true(fabs(hb_esa_waste(perf, a, n, 3, 5, thr) - (want + (1 / s) / (2 * perf[0] + 2 * perf[2]))) < 1e-12);
	/* too few ESTs: the artifact's 10000 */
	assert_true(hb_esa_waste(perf, a, n, 3, 7, thr) > 1000.0);
	/* one type: waste 0 whatever, ceil(maxP / n) ESTs each (the "hack") */
	n[0] = 3;
	n[2] = 0;
	assert_true(hb_esa_waste(perf, a, n, 3, 8, thr) == 0.0);
	assert_int_equal(thr[0], 3);
	assert_int_equal(thr[1], 0);
	assert_int_equal(thr[2], 0);
}

/* ---- the plan database against brute force --------------------------------- */

/* The vectors combinationSum records for candidate v: GPUs in groups of
 * ESTs descending (ties: type order); recorded when the last GPU added
 * reaches maxP. */
static int recorded(const int *v, const int *n, int ntypes, int mp)
{
	int order[HB_ESA_MAX_TYPES], k = 0, sum = 0, last = -1;

	for (int t = 0; t < ntypes; t++)
		if (v[t] > 0)
			order[k++] = t;
		else if (n[t] > 0)
			return 0; /* a GPU the candidate does not list */
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && v[order[j - 1]] < v[order[j]]; j--) {
			int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (int i = 0; i < k; i++) {
		sum += n[order[i]] * v[order[i]];
		if (n[order[i]] > 0)
			last = order[i];
	}
	return last >= 0 && sum >= mp && sum - v[last] < mp;
}

static void test_plans_brute_force(void **state)
{
	struct hb_rng r;

	(void)state;
	hb_rng_seed(&r, 37, 1);
	for (int trial = 0; trial < 150; trial++) {
		int ntypes = 1 + (int)(hb_rng_uniform(&r) * 3), nums[HB_ESA_MAX_TYPES], mp = 1 + (int)(hb_rng_uniform(&r) * 9);
		double perf[HB_ESA_MAX_TYPES];
		struct hb_esa_plans p;
		int n[HB_ESA_MAX_TYPES], count = 0;

		for (int t = 0; t < ntypes; t++) {
			nums[t] = (int)(hb_rng_uniform(&r) * 5);
			perf[t] = t == ntypes - 1 ? 1.0 : 0.6 + 2.5 * hb_rng_uniform(&r);
		}
		assert_int_equal(hb_esa_plans_build(perf, nums, ntypes, mp, &p), 0);
		/* every count vector: a plan iff some candidate records it, with
		 * the least waste of those candidates */
		memset(n, 0, sizeof(n));
		for (;;) {
			double best = INFINITY;
			int found = -1, t;

			for (int m = 1; m <= mp; m++) {
				int var[HB_ESA_MAX_TYPES][2], nv[HB_ESA_MAX_TYPES], idx[HB_ESA_MAX_TYPES] = { 0 };

				for (t = 0; t < ntypes; t++) {
					var[t][0] = (int)floor(m * perf[t]);
					var[t][1] = (int)ceil(m * perf[t]);
					nv[t] = var[t][1] != var[t][0] ? 2 : 1;
				}
				for (;;) {
					/* the candidate restricted to the types n uses: a
					 * subset of 2+ types, or one type at m ESTs */
					int v[HB_ESA_MAX_TYPES] = { 0 }, used = 0, over = 1, thr[HB_ESA_MAX_TYPES];
					double theory[HB_ESA_MAX_TYPES];

					for (t = 0; t < ntypes; t++)
						if (n[t] > 0) {
							v[t] = var[t][idx[t]];
							used++;
							over &= v[t] > mp;
						}
					for (t = 0; t < ntypes; t++)
						theory[t] = m * perf[t];
					if (used >= 2 && !over && recorded(v, n, ntypes, mp)) {
						double w = hb_esa_waste(theory, v, n, ntypes, mp, thr);

						if (w < best)
							best = w;
						found = 1;
					}
					if (used == 1) {
						for (t = 0; t < ntypes; t++)
							v[t] = n[t] > 0 ? m : 0;
						if (recorded(v, n, ntypes, mp)) {
							best = 0.0;
							found = 1;
						}
					}
					for (t = ntypes - 1; t >= 0 && idx[t] == nv[t] - 1; t--)
						idx[t] = 0;
					if (t < 0)
						break;
					idx[t]++;
				}
			}
			if (found > 0) {
				int hit = -1;

				count++;
				for (int i = 0; i < p.n && hit < 0; i++)
					if (memcmp(p.v[i].n, n, sizeof(int) * (size_t)ntypes) == 0)
						hit = i;
				assert_true(hit >= 0);
				assert_true(fabs(p.v[hit].waste - best) < 1e-12);
			}
			for (t = 0; t < ntypes && n[t] == nums[t]; t++)
				n[t] = 0;
			if (t == ntypes)
				break;
			n[t]++;
		}
		assert_int_equal(p.n, count);
		/* order: speedup descending, ties the fastest type's GPUs descending;
		 * speedup = sum perf n (1 - waste) */
		for (int i = 0; i < p.n; i++) {
			double s = 0.0;

			for (int t = 0; t < ntypes; t++)
				s += perf[t] * p.v[i].n[t];
			assert_true(fabs(p.v[i].speedup - s * (1.0 - p.v[i].waste)) < 1e-12);
			if (i > 0) {
				assert_true(p.v[i - 1].speedup >= p.v[i].speedup);
				if (p.v[i - 1].speedup == p.v[i].speedup)
					assert_true(p.v[i - 1].n[0] >= p.v[i].n[0]);
			}
		}
		hb_esa_plans_free(&p);
	}
}

static void test_filters_and_step(void **state)
{
	double perf[3] = { 0.6811 / 0.4413, 0.6811 / 0.6069, 1.0 }, gpu_s[3] = { 0.4413, 0.6069, 0.6811 };
	int nums[3] = { 32, 16, 16 };
	struct hb_esa_plans p;
	struct hb_esa_plan q;

	(void)state;
	assert_int_equal(hb_esa_plans_build(perf, nums, 3, 8, &p), 0);
	/* a D2 job's first plan ([-1]): the lowest speedup, one T4 */
	assert_int_equal(p.v[p.n - 1].n[2], 1);
	assert_int_equal(p.v[p.n - 1].n[0] + p.v[p.n - 1].n[1], 0);
	assert_int_equal(p.v[p.n - 1].threads[2], 8);
	/* the top plan: all maxP on V100, one EST each */
	assert_int_equal(p.v[0].n[0], 8);
	hb_esa_plans_keep_type(&p, 0, 0);
	/* one type: the counts the search reaches, ceil(8 / a) for a ESTs each */
	assert_int_equal(p.n, 5);
	for (int i = 0, want[5] = { 8, 4, 3, 2, 1 }; i < p.n; i++) {
		assert_int_equal(p.v[i].n[0], want[i]);
		assert_int_equal(p.v[i].n[1] + p.v[i].n[2], 0);
		assert_int_equal(p.v[i].threads[0], (8 + p.v[i].n[0] - 1) / p.v[i].n[0]);
	}
	/* Job.get_placement_proposals(force_non_elastic): maxP GPUs of it */
	hb_esa_plans_keep_type(&p, 0, 8);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0].n[0], 8);
	hb_esa_plans_free(&p);
	/* get_comp_time: every type's ESTs count, one with no GPU too */
	memset(&q, 0, sizeof(q));
	q.n[0] = 2;
	q.threads[0] = 2;
	q.threads[2] = 2;
	assert_true(hb_esa_comp_s(&q, gpu_s, 3) == 2 * 0.6811);
	/* bad arguments */
	perf[2] = 0.0;
	assert_int_equal(hb_esa_plans_build(perf, nums, 3, 8, &p), -1);
}

/* ---- the workload reader --------------------------------------------------------- */

static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#define HEADER "name,time,application,max_parallelism,batch_size,epochs,enable_heterogeneous_deterministic,preferred_gpu\n"

static void expect_error(const char *row, const char *field, const char *value)
{
	char text[512];
	const char *path;
	struct hb_trace_reader *r;
	struct hb_jobspec j;
	struct hb_error err = { 0 };
	int rc;

	snprintf(text, sizeof(text), HEADER "ok-1,100,bert,8,8,40,1,v100\n%s\n", row);
	path = write_file("bad.csv", text);
	assert_int_equal(hb_trace_open(path, HB_TRACE_AUTO, NULL, &r, &err), 0);
	assert_int_equal(hb_trace_get_format(r), HB_TRACE_EASYSCALE_WORKLOAD);
	assert_int_equal(hb_trace_next(r, &j, &err), 1);
	rc = hb_trace_next(r, &j, &err);
	hb_trace_close(r);
	assert_int_equal(rc, -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "bad.csv:3"));
	assert_non_null(strstr(err.msg, field));
	assert_non_null(strstr(err.msg, value));
}

static void test_reader(void **state)
{
	const char *path;
	struct hb_trace_reader *r;
	struct hb_jobspec j;
	struct hb_error err = { 0 };

	(void)state;
	path = write_file("ok.csv", HEADER "vgg-1,115,vgg19,16,32,50,0,p100\n"
					  "electra-2,200,electra,32,8,120,40,v100\n"
					  "swin-3,300,SwinTransformer,4,32,7,False,t4\n");
	assert_int_equal(hb_trace_open(path, HB_TRACE_AUTO, NULL, &r, &err), 0);
	assert_int_equal(hb_trace_next(r, &j, &err), 1);
	assert_string_equal(j.model, "resnet50");
	assert_string_equal(j.app, "vgg19");
	assert_string_equal(j.gpu_type, "p100");
	assert_int_equal(j.gpus, 16);
	assert_int_equal(j.batch, 16 * 32);
	assert_true(j.epochs == 0.5);      /* 50 epochs of a 1 % dataset */
	assert_int_equal(j.d2, HB_D2_NO);
	assert_int_equal(hb_trace_next(r, &j, &err), 1);
	assert_string_equal(j.model, "bert");
	assert_string_equal(j.gpu_type, "v100-32gb");
	assert_int_equal(j.d2, HB_D2_YES); /* bool(40) */
	assert_int_equal(hb_trace_next(r, &j, &err), 1);
	assert_string_equal(j.model, "vit");
	assert_int_equal(j.d2, HB_D2_NO);
	assert_int_equal(hb_trace_next(r, &j, &err), 0);
	hb_trace_close(r);

	expect_error("x,1,alexnet,8,8,40,1,v100", "application", "alexnet");
	expect_error("x,1,bert,8,8,40,1,a100", "preferred_gpu", "a100");
	expect_error("x,1,bert,8,8,40,maybe,v100", "enable_heterogeneous_deterministic", "maybe");
	expect_error("x,1,bert,8,8,0,1,v100", "epochs", "0");
	expect_error("x,1,bert,0,8,40,1,v100", "max_parallelism", "0");
	expect_error("x,-5,bert,8,8,40,1,v100", "time", "-5");
	expect_error("x,1,bert,8,,40,1,v100", "field 'batch_size': value ''", "not an integer");
	expect_error("x,1,bert,8,8,40,1", "expected 8 fields", "found 7");
}

/* ---- the timeline, through the CLI ------------------------------------------------ */

/* Run hetbatch on text; mean JCT (s) of policy, from its --json. */
static double run_jct(const char *text, const char *policy, double *makespan)
{
	char cmd[2048], line[8192];
	const char *path = write_file("wl.csv", text), *hb = getenv("HETBATCH");
	double jct = -1.0;
	FILE *f;

	assert_non_null(hb);
	snprintf(cmd, sizeof(cmd),
		 "'%s' -q sim --cluster easyscale --trace '%s' --fidelity easyscale --policy %s --json | python3 -c "
		 "'import json,sys; p=json.load(sys.stdin)[\"policies\"][0]; print(p[\"jct_mean_h\"]*3600, "
		 "p[\"makespan_h\"]*3600)'",
		 hb, path, policy);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (fgets(line, sizeof(line), f))
		assert_int_equal(sscanf(line, "%lf %lf", &jct, makespan), 2);
	assert_int_equal(pclose(f), 0);
	return jct;
}

static void test_fifo_timeline(void **state)
{
	/* One BERT job, maxP 8 x b 8 on V100 (0.4413 s a step, [A]
	 * overhead.csv), 40 epochs of 1 % of SQuAD's 88,641: submitted at
	 * 100, first round at 120, 20 s before its first step, then 64
	 * samples per 0.4413 s; hetbatch ends at a whole step (<= 0.45 s). */
	double work = 40 * 0.01 * 88641, run = work / (64 / 0.4413), mk, jct, jct2;

	(void)state;
	jct = run_jct(HEADER "b,100,bert,8,8,40,1,v100\n", "yarn-cs", &mk);
	assert_true(jct >= 120 + 20 + run - 100 && jct <= 120 + 20 + run - 100 + 0.45);
	/* a second job submitted at once starts at the first round after the
	 * first ends (one job at a time), and pays its own 20 s */
	jct2 = run_jct(HEADER "b,100,bert,8,8,40,1,v100\nc,100,bert,8,8,40,1,v100\n", "yarn-cs", &mk);
	{
		double end1 = 120 + 20 + run, start2 = 60 * ceil(end1 / 60);

		assert_true(fabs(mk - (start2 + 20 + run - 100)) <= 0.9); /* hetbatch: from the first arrival */
		assert_true(fabs(jct2 - ((end1 - 100) + (start2 + 20 + run - 100)) / 2) <= 0.9);
	}
	/* job order is file order: "first" (submitted at 200) is the head
	 * from the 240 round on, so "second" (100), running since 120 + 20 s,
	 * stops there with 100 s of its work done and resumes at the round
	 * after "first" ends, without a second 20 s.  Mean of 260 + run - 200
	 * and (60 ceil((260 + run) / 60) + run - 100 s) - 100. */
	jct2 = run_jct(HEADER "first,200,bert,8,8,40,1,v100\nsecond,100,bert,8,8,40,1,v100\n", "yarn-cs", &mk);
	{
		double end1 = 260 + run, end2 = 60 * ceil(end1 / 60) + run - 100;

		assert_true(fabs(jct2 - ((end1 - 200) + (end2 - 100)) / 2) <= 0.9);
		assert_true(fabs(mk - (end2 - 100)) <= 0.9);
	}
	/* a name given twice: one job, the later row's values (80 epochs) */
	jct2 = run_jct(HEADER "b,100,bert,8,8,40,1,v100\nb,100,bert,8,8,80,1,v100\n", "yarn-cs", &mk);
	assert_true(fabs(jct2 - (120 + 20 + 2 * run - 100)) <= 0.9);
}

/* Job.submit_proposals + EasyPolicy.optimize_v3 for one job alone (every
 * increment fits): written again here from the artifact's code over the
 * same plan database, the placements it goes through, round by round. */
static int oracle_growth(const struct hb_esa_plans *p, int rounds, struct hb_esa_plan *seq)
{
	struct hb_esa_plan cur = p->v[p->n - 1]; /* get_placement_proposals()[-1] */
	int n = 0;

	seq[n++] = cur;
	for (int r = 0; r < rounds; r++) {
		int have = 0, found = 0;
		double best_inc = 0;
		struct hb_esa_plan best;

		for (int t = 0; t < 3; t++)
			have += cur.n[t];
		for (int g = 0; g < 3; g++) { /* available_proposals[gpu], then its best */
			int got = 0;
			double inc_g = 0;
			struct hb_esa_plan tmp_g;

			for (int i = 0; i < p->n; i++) {
				const struct hb_esa_plan *q = &p->v[i];
				struct hb_esa_plan tmp = *q;
				int ok = q->n[g] > cur.n[g], sum = 0, tsum = 0;
				double inc;

				for (int t = 0; t < 3; t++) {
					sum += q->n[t];
					if (t != g && q->n[t] > cur.n[t])
						ok = 0;
				}
				if (q->speedup < cur.speedup || q->waste > 0.30 || sum > 2 * have || !ok)
					continue;
				memcpy(tmp.n, cur.n, sizeof(tmp.n));
				tmp.n[g] = q->n[g];
				for (int t = 0; t < 3; t++)
					tsum += tmp.n[t];
				if (tsum > 2 * have)
					continue;
				inc = (q->speedup / cur.speedup - 1) / (q->n[g] - cur.n[g]) + 1;
				if (!got || inc > inc_g) {
					got = 1;
					inc_g = inc;
					tmp_g = tmp;
				}
			}
			if (got && (!found || inc_g > best_inc)) { /* sorted by inc_perf, stable */
				found = 1;
				best_inc = inc_g;
				best = tmp_g;
			}
		}
		if (!found)
			break;
		cur = best;
		seq[n++] = cur;
	}
	return n;
}

static void test_growth_one_job(void **state)
{
	/* one D2 BERT job, maxP 16 x b 8, alone on easyscale: it starts on
	 * the last plan and takes the best increment every round until none
	 * qualifies; each configuration's step is get_comp_time over the
	 * artifact's BERT times */
	double gpu_s[3] = { 0.4413, 0.6069, 0.6811 }, perf[3];
	int nums[3] = { 32, 16, 16 };
	struct hb_esa_plans p;
	struct hb_esa_plan seq[64];
	char cmd[2048], line[4096];
	const char *path = write_file("grow.csv", HEADER "g,30,bert,16,8,3000,1,v100\n"), *hb = getenv("HETBATCH");
	FILE *f;
	int n, k = 0;

	(void)state;
	for (int t = 0; t < 3; t++)
		perf[t] = gpu_s[2] / gpu_s[t];
	assert_int_equal(hb_esa_plans_build(perf, nums, 3, 16, &p), 0);
	n = oracle_growth(&p, 60, seq);
	assert_true(n >= 3);
	snprintf(cmd, sizeof(cmd),
		 "'%s' -q sim --cluster easyscale --trace '%s' --fidelity easyscale --policy easyscale --events all "
		 "--csv --out '%s/grow' --force >/dev/null && grep -E ',(start|restart),' '%s/grow/events.csv'",
		 hb, path, tmpdir, tmpdir);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int got[3] = { 0, 0, 0 };
		const char *a = strstr(line, "alloc "), *s = strstr(line, "iter_s ");
		double iter;

		assert_non_null(a);
		assert_non_null(s);
		for (a += 6; *a && *a != ','; ) {
			char node[64];
			int c, used;

			if (sscanf(a, "%63[^=]=%d%n", node, &c, &used) != 2)
				break;
			got[strncmp(node, "v100", 4) == 0 ? 0 : strncmp(node, "p100", 4) == 0 ? 1 : 2] += c;
			a += used;
			while (*a == ' ')
				a++;
		}
		iter = strtod(s + 7, NULL);
		assert_true(k < n);
		for (int t = 0; t < 3; t++)
			assert_int_equal(got[t], seq[k].n[t]);
		assert_true(fabs(iter - hb_esa_comp_s(&seq[k], gpu_s, 3)) < 1e-6);
		k++;
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(k, n);
	hb_esa_plans_free(&p);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-esa-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waste_by_hand),
		cmocka_unit_test(test_plans_brute_force),
		cmocka_unit_test(test_filters_and_step),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_fifo_timeline),
		cmocka_unit_test(test_growth_one_job),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
