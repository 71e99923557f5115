/*
 * stats.c: the shared convergence model (see stats.h and DESIGN.md,
 * "Statistical model").
 *
 * Two sources of the gradient noise scale phi:
 *   - the catalog trajectory phi(f) (hb_model_gns), used for every model;
 *   - Pollux's measured gradient statistics (validation-<M>.csv, imported as
 *     gradstats rows), which replace it when the profile database has them.
 *
 * Normalisation of the gradstats (notes/pollux.md 1.4 [ART]): AdaptDL stores
 * grad_sqr, an estimate of |g|^2, and grad_var = (local_sqr - total_sqr) *
 * scale / (c - 1) with scale = M / M0, an estimate of tr(Sigma) / M0, i.e.
 * the gradient variance of one batch of M0 samples, where M0 is the
 * application's base batch (AdaptDL's init_batch_size), not the batch of the
 * run.  Hence phi = M0 * grad_var / grad_sqr, with M0 = model->m0: the
 * catalog's Pollux models carry Pollux's M0 there (e.g. ImageNet 200, whose
 * validation-200.csv gives phi = 928 at epoch 0, as the note's table).
 * The "batch" of a row is the global batch M the validation run trained at
 * (the <M> of the file name): the statistics are those seen along a
 * training trajectory at M, which is why phi depends on the batch and is
 * interpolated between runs.
 *
 * Training fraction -> epoch: Pollux's rows are statistical epochs (the
 * "progress" column grows by about one M0-epoch of scale-invariant
 * iterations per row at every M), and each run covers the whole training
 * budget, so f maps to the row position x = f * (n - 1) of a run with n rows:
 * the first row at f = 0, the last at f = 1, linear in between.  This is the
 * mapping the catalog trajectories were built with (ImageNet's points sit at
 * f = epoch / 89 for 90 epochs), so both sources agree at M0.  The
 * artifact's simulator holds row e constant during epoch e (notes/pollux.md
 * 8.2 A14); the linear reading differs from it by less than one epoch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profdb.h"
#include "stats.h"

int hb_stats_init(struct hb_stats *s, const struct hb_model *m, struct hb_error *err)
{
	memset(s, 0, sizeof(*s));
	if (m->m0 < 1)
		return hb_input_error(err, "model '%s': field 'm0': value %ld: must be >= 1", m->name, m->m0);
	if (!(m->target_epochs > 0) || !isfinite(m->target_epochs))
		return hb_input_error(err, "model '%s': field 'target_epochs': value %g: must be > 0", m->name,
				      m->target_epochs);
	if (!(m->dataset_size > 0) || !isfinite(m->dataset_size))
		return hb_input_error(err, "model '%s': field 'dataset_size': value %g: must be > 0", m->name,
				      m->dataset_size);
	if (!(m->sim_noise_sigma >= 0) || !isfinite(m->sim_noise_sigma))
		return hb_input_error(err, "model '%s': field 'sim_noise_sigma': value %g: must be >= 0", m->name,
				      m->sim_noise_sigma);
	if (m->ngns < 1)
		return hb_input_error(err, "model '%s': field 'gns': no trajectory points", m->name);
	for (int i = 0; i < m->ngns; i++)
		if (!(m->gns_phi[i] > 0) || !isfinite(m->gns_phi[i]))
			return hb_input_error(err, "model '%s': field 'gns[%d]': value %g: phi must be > 0", m->name,
					      i, m->gns_phi[i]);
	s->model = m;
	s->progress = HB_PROGRESS_POLLUX;
	s->gamma = m->gamma; /* without a cluster's override; the simulator sets the cluster's */
	s->m0 = (double)m->m0;
	s->target = m->target_epochs * m->dataset_size;
	s->sigma = m->sim_noise_sigma;
	return 0;
}

static void free_runs(struct hb_stats_run *runs, int n)
{
	for (int i = 0; i < n; i++)
		free(runs[i].phi);
	free(runs);
}

void hb_stats_free(struct hb_stats *s)
{
	free_runs(s->runs, s->nruns);
	s->runs = NULL;
	s->nruns = 0;
}

/* Fill the epochs a run has no valid row for (known[e] == 0) linearly
 * between the nearest valid epochs, holding the end values flat; the run
 * keeps its length so the fraction -> epoch mapping is unchanged. */
static void fill_gaps(double *phi, const unsigned char *known, int n)
{
	int prev = -1;

	for (int e = 0; e < n; e++) {
		int next;

		if (known[e]) {
			prev = e;
			continue;
		}
		for (next = e + 1; next < n && !known[next]; next++)
			;
		if (prev < 0)
			phi[e] = phi[next];
		else if (next >= n)
			phi[e] = phi[prev];
		else
			phi[e] = phi[prev] + (phi[next] - phi[prev]) * (double)(e - prev) / (double)(next - prev);
	}
}

/* Build one run from rows[lo, hi) (same batch, epochs ascending).  Rows with
 * a non-positive or non-finite grad_sqr or grad_var carry no usable phi
 * (e.g. grad_sqr = 0 in DeepSpeech2's validation-20.csv): they are skipped
 * and counted.  *ok = 0 when no row of the run is usable. */
static int build_run(const struct hb_stats *s, const struct hb_gradstats_row *rows, int lo, int hi,
		     struct hb_stats_run *run, int *skipped, int *ok, struct hb_error *err)
{
	unsigned char *known;
	int n = rows[hi - 1].epoch + 1, nvalid = 0;

	*ok = 0;
	run->batch = rows[lo].batch;
	run->nepochs = n;
	run->phi = calloc((size_t)n, sizeof(*run->phi));
	known = calloc((size_t)n, 1);
	if (!run->phi || !known) {
		free(known);
		free(run->phi);
		run->phi = NULL;
		return hb_runtime_error(err, "gradstats of model '%s': out of memory for %d epochs", s->model->name,
					n);
	}
	for (int i = lo; i < hi; i++) {
		const struct hb_gradstats_row *r = &rows[i];
		double phi = 0.0;

		if (r->grad_sqr > 0 && r->grad_var > 0 && isfinite(r->grad_sqr) && isfinite(r->grad_var))
			phi = s->m0 * r->grad_var / r->grad_sqr;
		if (!isfinite(phi) || !(phi > 0)) {
			(*skipped)++;
			continue;
		}
		run->phi[r->epoch] = phi;
		known[r->epoch] = 1;
		nvalid++;
	}
	if (nvalid > 0) {
		fill_gaps(run->phi, known, n);
		*ok = 1;
	}
	free(known);
	return 0;
}

int hb_stats_load_gradstats(struct hb_stats *s, struct hb_profdb *db, int *used, struct hb_error *err)
{
	struct hb_gradstats_row *rows = NULL;
	struct hb_stats_run *runs = NULL;
	int n = 0, nruns = 0, skipped = 0;

	*used = 0;
	if (!db)
		return 0;
	if (hb_profdb_get_gradstats(db, s->model->name, &rows, &n, err) < 0) {
		hb_error_prefix(err, "loading gradstats of model '%s'", s->model->name);
		return -1;
	}
	if (n <= 0) {
		free(rows);
		return 0;
	}
	/* The reader orders rows by (batch, epoch); check rather than trust it,
	 * since the grouping below depends on it. */
	for (int i = 0; i < n; i++) {
		const struct hb_gradstats_row *r = &rows[i];

		if (r->batch < 1 || r->epoch < 0 || r->epoch >= 1000000)
			goto bad_row;
		if (i > 0 && (r->batch < rows[i - 1].batch ||
			      (r->batch == rows[i - 1].batch && r->epoch <= rows[i - 1].epoch)))
			goto bad_row;
		continue;
bad_row:
		hb_input_error(err,
			       "%s: gradstats of model '%s': row %d (batch %d, epoch %d): batch must be >= 1, "
			       "epoch in 0..999999, rows unique and ordered by (batch, epoch)",
			       hb_profdb_path(db), s->model->name, i, r->batch, r->epoch);
		free(rows);
		return -1;
	}
	runs = calloc((size_t)n, sizeof(*runs));
	if (!runs) {
		free(rows);
		return hb_runtime_error(err, "gradstats of model '%s': out of memory", s->model->name);
	}
	for (int lo = 0, hi; lo < n; lo = hi) {
		int ok;

		for (hi = lo + 1; hi < n && rows[hi].batch == rows[lo].batch; hi++)
			;
		if (build_run(s, rows, lo, hi, &runs[nruns], &skipped, &ok, err) < 0) {
			free_runs(runs, nruns);
			free(rows);
			return -1;
		}
		if (ok)
			nruns++;
		else
			free(runs[nruns].phi);
	}
	free(rows);
	if (nruns == 0) {
		free(runs);
		return hb_input_error(err,
				      "%s: gradstats of model '%s': all %d rows have a non-positive or non-finite "
				      "grad_sqr or grad_var, so no phi = M0 grad_var / grad_sqr can be formed",
				      hb_profdb_path(db), s->model->name, skipped);
	}
	/* A second load replaces the first. */
	hb_stats_free(s);
	s->runs = runs;
	s->nruns = nruns;
	s->nskipped = skipped;
	*used = 1;
	return 0;
}

/* phi of one run at row position x (clamped to the run). */
static double run_phi(const struct hb_stats_run *r, double f)
{
	double x = f * (double)(r->nepochs - 1);
	int e;

	if (r->nepochs == 1 || !(x > 0))
		return r->phi[0];
	if (x >= (double)(r->nepochs - 1))
		return r->phi[r->nepochs - 1];
	e = (int)x;
	return r->phi[e] + (x - (double)e) * (r->phi[e + 1] - r->phi[e]);
}

double hb_stats_phi(const struct hb_stats *s, double f, double batch)
{
	const struct hb_stats_run *lo, *hi;
	double plo, phi_hi, w;
	int i;

	if (!(f > 0))
		f = 0; /* also NaN */
	else if (f > 1)
		f = 1;
	if (!s->runs)
		return hb_model_gns(s->model, f);
	/* Outside the measured batches the nearest run is used as is: the
	 * trajectory at a batch never trained at is not extrapolated. */
	if (s->nruns == 1 || !(batch > s->runs[0].batch))
		return run_phi(&s->runs[0], f);
	if (batch >= s->runs[s->nruns - 1].batch)
		return run_phi(&s->runs[s->nruns - 1], f);
	for (i = 1; i < s->nruns - 1 && batch > s->runs[i].batch; i++)
		;
	lo = &s->runs[i - 1];
	hi = &s->runs[i];
	plo = run_phi(lo, f);
	phi_hi = run_phi(hi, f);
	w = log(batch / lo->batch) / log((double)hi->batch / lo->batch);
	return plo + w * (phi_hi - plo);
}

/* ---- progress models (stats.h) ----------------------------------------------- */

/* Indexed by enum hb_progress_model; a new model adds its name here. */
static const char *const progress_names[HB_PROGRESS_COUNT] = { "pollux", "similarity", "pollux-artifact",
								     "samples" };

const char *hb_progress_name(enum hb_progress_model p)
{
	return (int)p >= 0 && p < HB_PROGRESS_COUNT ? progress_names[p] : "?";
}

const char *hb_progress_names(void)
{
	return "pollux, similarity, pollux-artifact, samples";
}

int hb_progress_parse(const char *name, const char *what, enum hb_progress_model *out, struct hb_error *err)
{
	for (int i = 0; name && i < HB_PROGRESS_COUNT; i++)
		if (strcmp(name, progress_names[i]) == 0) {
			*out = (enum hb_progress_model)i;
			return 0;
		}
	return hb_input_error(err, "%s: '%s' is not a progress model (valid: %s)", what, name ? name : "(null)",
			      hb_progress_names());
}

double hb_stats_gamma_batch(double gamma, double phi)
{
	if (!(gamma > 0) || !(gamma < 1) || !(phi > 0))
		return 0.0;
	return 2.0 * gamma * phi / (1.0 - gamma);
}

double hb_stats_pollux_efficiency(const struct hb_stats *s, double phi, double batch)
{
	return (phi + s->m0) / (phi + batch);
}

double hb_stats_efficiency(const struct hb_stats *s, double phi, double batch)
{
	double knee;

	if (s->progress == HB_PROGRESS_SAMPLES)
		return 1.0; /* work in samples, whatever the batch (stats.h) */
	if (s->progress != HB_PROGRESS_SIMILARITY)
		return hb_stats_pollux_efficiency(s, phi, batch);
	/* Perfect scaling up to the batch the similarity rule settles at, no
	 * scaling above it; the recipe's M0 is never charged (stats.h). */
	knee = hb_stats_gamma_batch(s->gamma, phi);
	if (knee < s->m0)
		knee = s->m0;
	return batch > knee ? knee / batch : 1.0;
}

double hb_stats_similarity(double phi, double batch)
{
	if (!(batch > 0))
		return 0.0;
	return batch / (batch + 2.0 * phi);
}

double hb_stats_observe_similarity(const struct hb_stats *s, double phi, double batch, struct hb_rng *rng)
{
	/* Draw even when sigma is 0, so the stream advances the same way
	 * whatever the model's noise level. */
	double v = hb_stats_similarity(phi, batch) + s->sigma * hb_rng_normal(rng);

	if (v > 1.0)
		return 1.0;
	if (v < -1.0)
		return -1.0;
	return v;
}

double hb_stats_unequal_factor(const struct hb_stats *s, const double *local_bs, int n)
{
	double mean = 0.0, var = 0.0;

	if (s->unequal_k == 0.0 || n < 2)
		return 1.0;
	for (int i = 0; i < n; i++)
		mean += local_bs[i];
	mean /= n;
	if (!(mean > 0))
		return 1.0;
	/* Population variance: cv describes this set of batches, not a sample
	 * drawn from a larger one. */
	for (int i = 0; i < n; i++)
		var += (local_bs[i] - mean) * (local_bs[i] - mean);
	var /= n;
	return 1.0 / (1.0 + s->unequal_k * var / (mean * mean));
}
