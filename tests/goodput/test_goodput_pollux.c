/* Fit of theta_sys on Pollux's published throughput profiles
 * ($HB_SHARED/data/pollux/profiles/APP/{placements,scalability}.csv, read in
 * place).  Exits 77 (skipped) when the data is absent. */
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

#include "csv.h"
#include "goodput.h"

static const char *shared;

static void print_params(const char *what, const struct hb_goodput_params *p)
{
	print_message("%s: alpha_c %.5g beta_c %.5g alpha_n %.5g beta_n %.5g alpha_r %.5g "
		      "beta_r %.5g gamma %.4g\n", what, p->alpha_c, p->beta_c, p->alpha_n,
		      p->beta_n, p->alpha_r, p->beta_r, p->gamma);
}

static void push(struct hb_goodput_sample **smp, size_t *n, size_t *cap, struct hb_goodput_sample s)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*smp = realloc(*smp, *cap * sizeof(**smp));
		assert_non_null(*smp);
	}
	(*smp)[(*n)++] = s;
}

/* Rows of placements.csv (placement_form = 1: "22" = 2 nodes x 2 GPUs, one
 * digit per node) or scalability.csv (num_nodes, num_replicas).  Each row is
 * one s = 0 measurement: iter_s = step_time, compute_s = step_time -
 * sync_time, as the artifact's simulator feeds its fit. */
static int load_rows(const char *path, int placement_form, struct hb_goodput_sample **smp,
		     size_t *n, size_t *cap, struct hb_error *err)
{
	static const char *const pcols[] = { "placement", "local_bsz", "step_time", "sync_time", NULL };
	static const char *const scols[] = { "num_nodes", "num_replicas", "local_bsz", "step_time",
					     "sync_time", NULL };
	struct hb_csv c;
	int idx[5], rc;

	if (hb_csv_open(&c, path, err))
		return -1;
	if (hb_csv_header(&c, placement_form ? pcols : scols, idx, err)) {
		hb_csv_close(&c);
		return -1;
	}
	while ((rc = hb_csv_next(&c, err)) == 1) {
		struct hb_goodput_sample s = { 0 };
		double step, sync;
		long bsz;
		int k = 0;

		if (placement_form) {
			const char *pl;

			if (hb_csv_str(&c, idx[k++], &pl, err)) {
				rc = -1;
				break;
			}
			for (const char *q = pl; *q; q++) {
				s.num_nodes++;
				s.num_replicas += *q - '0';
			}
		} else {
			long nn, nr;

			if (hb_csv_long(&c, idx[k++], &nn, err) || hb_csv_long(&c, idx[k++], &nr, err)) {
				rc = -1;
				break;
			}
			s.num_nodes = (int)nn;
			s.num_replicas = (int)nr;
		}
		if (hb_csv_long(&c, idx[k], &bsz, err) || hb_csv_double(&c, idx[k + 1], &step, err) ||
		    hb_csv_double(&c, idx[k + 2], &sync, err)) {
			rc = -1;
			break;
		}
		s.local_bsz = (int)bsz;
		s.iter_s = step;
		s.compute_s = step - sync > 0 ? step - sync : 0;
		push(smp, n, cap, s);
	}
	hb_csv_close(&c);
	return rc < 0 ? -1 : 0;
}

struct app_fit {
	size_t n, n_place;
	double rms_all, rms_place, rms_scal, worst;
	struct hb_goodput_fit_result res;
};

static void fit_app(const char *app, struct app_fit *out)
{
	char path[1024];
	struct hb_goodput_sample *smp = NULL;
	size_t n = 0, cap = 0;
	struct hb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/data/pollux/profiles/%s/placements.csv", shared, app);
	if (load_rows(path, 1, &smp, &n, &cap, &err))
		fail_msg("%s", err.msg);
	out->n_place = n;
	snprintf(path, sizeof(path), "%s/data/pollux/profiles/%s/scalability.csv", shared, app);
	if (load_rows(path, 0, &smp, &n, &cap, &err))
		fail_msg("%s", err.msg);
	out->n = n;
	if (hb_goodput_fit(smp, n, NULL, &out->res, &err))
		fail_msg("%s: %s", app, err.msg);
	out->rms_all = hb_goodput_rmsle(&out->res.params, smp, n, NULL);
	out->rms_place = hb_goodput_rmsle(&out->res.params, smp, out->n_place, NULL);
	out->rms_scal = hb_goodput_rmsle(&out->res.params, smp + out->n_place, n - out->n_place, NULL);
	out->worst = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs(log(hb_goodput_iter_time(&out->res.params, smp[i].num_nodes,
							 smp[i].num_replicas, smp[i].local_bsz, 0) /
				    smp[i].iter_s));

		out->worst = e > out->worst ? e : out->worst;
	}
	print_params(app, &out->res.params);
	print_message("  %zu rows (%zu placements + %zu scalability): RMS log error of step_time "
		      "%.4f (placements %.4f, scalability %.4f), worst row %.3f, compute RMSLE "
		      "%.4f, objective %.5f\n", n, out->n_place, n - out->n_place, out->rms_all,
		      out->rms_place, out->rms_scal, out->worst, out->res.rmsle_compute,
		      out->res.objective);
	free(smp);
}

static void test_fit_imagenet(void **state)
{
	struct app_fit f;

	(void)state;
	fit_app("imagenet", &f);
	assert_true(f.n_place == 864 && f.n == 864 + 288);
	/* Every link type and K > 2 is in the data: no prior applies. */
	assert_int_equal(f.res.priors, 0);
	assert_true(fabs(f.rms_all - f.res.rmsle_iter) < 1e-12);
	/* The paper reports an average fitted-model error of at most 10 % per
	 * task on diverse placements (note 2.2).  These rows add 6-16-node
	 * scalability runs up to 64 GPUs and single noisy measurements (e.g.
	 * placement "11", m = 40 has a sync time 3x its neighbours'), so the
	 * bound is 15 % RMS on the log scale. */
	assert_true(f.rms_all <= 0.15);
}

static void test_fit_other_apps(void **state)
{
	static const char *const apps[] = { "cifar10", "bert", "deepspeech2", "yolov3", "ncf" };
	struct app_fit f;

	(void)state;
	/* Same bound as ImageNet; measured 10.5-13.2 % RMS. */
	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++) {
		fit_app(apps[i], &f);
		assert_true(f.rms_all <= 0.15);
	}
}

int main(void)
{
	char probe[1024];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_imagenet),
		cmocka_unit_test(test_fit_other_apps),
	};

	shared = getenv("HB_SHARED");
	if (!shared)
		return 77;
	snprintf(probe, sizeof(probe), "%s/data/pollux/profiles/imagenet/placements.csv", shared);
	if (access(probe, R_OK) != 0) {
		fprintf(stderr, "%s not readable: skipping\n", probe);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
