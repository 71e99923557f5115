/*
 * fidelity.c: the Pollux-fidelity mode's progress model and batch rule
 * (fidelity.h says what the artifact does and where).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fidelity.h"
#include "perf_measured.h"
#include "profdb.h"

/* The artifact runs NCF at batch 32768 on at most one GPU under Pollux
 * and Optimus (simulator.py Cluster.__init__, get_pollux_job_info,
 * get_optimus_job_info); TunedJobs' NCF rows ask for the same. */
#define NCF_PINNED_BATCH 32768L

void hb_fid_model_free(struct hb_fid_model *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->nruns; i++) {
		free(f->runs[i].progress);
		free(f->runs[i].sqr);
		free(f->runs[i].var);
		free(f->runs[i].iteration);
	}
	free(f->runs);
	free(f->bound);
	memset(f, 0, sizeof(*f));
}

/* Runs from rows ordered by (batch, epoch); epochs must be 0, 1, 2, ... */
static int build_runs(struct hb_fid_model *f, const struct hb_gradstats_row *rows, int n, const char *path,
		      const char *model, struct hb_error *err)
{
	f->runs = calloc((size_t)n, sizeof(*f->runs));
	if (!f->runs)
		return hb_runtime_error(err, "fidelity: gradstats of %s: out of memory", model);
	for (int lo = 0, hi; lo < n; lo = hi) {
		struct hb_fid_run *r = &f->runs[f->nruns];
		int ne;

		for (hi = lo + 1; hi < n && rows[hi].batch == rows[lo].batch; hi++)
			;
		ne = hi - lo;
		for (int i = lo; i < hi; i++)
			if (rows[i].epoch != i - lo || !isfinite(rows[i].progress) || !isfinite(rows[i].grad_sqr) ||
			    !isfinite(rows[i].grad_var) || rows[i].grad_sqr < 0 || rows[i].grad_var < 0)
				return hb_input_error(err,
						      "%s: gradstats of model '%s', batch %d, epoch %d: Pollux fidelity "
						      "needs epochs 0, 1, 2, ... with finite progress and non-negative "
						      "grad_sqr, grad_var (progress %g, grad_sqr %g, grad_var %g)",
						      path, model, rows[i].batch, rows[i].epoch, rows[i].progress,
						      rows[i].grad_sqr, rows[i].grad_var);
		r->batch = rows[lo].batch;
		r->nepochs = ne;
		r->progress = malloc(sizeof(double) * (size_t)ne);
		r->sqr = malloc(sizeof(double) * (size_t)ne);
		r->var = malloc(sizeof(double) * (size_t)ne);
		r->iteration = malloc(sizeof(double) * (size_t)ne);
		f->nruns++;
		if (!r->progress || !r->sqr || !r->var || !r->iteration)
			return hb_runtime_error(err, "fidelity: gradstats of %s: out of memory", model);
		for (int i = 0; i < ne; i++) {
			r->progress[i] = rows[lo + i].progress;
			r->sqr[i] = rows[lo + i].grad_sqr;
			r->var[i] = rows[lo + i].grad_var;
			r->iteration[i] = (double)rows[lo + i].iteration;
		}
	}
	return 0;
}

int hb_fid_model_available(struct hb_profdb *db, const struct hb_model *m)
{
	struct hb_gradstats_row *rows = NULL;
	struct hb_error ignored = { 0 };
	int n = 0;

	if (!db || hb_profdb_get_gradstats(db, m->name, &rows, &n, &ignored) < 0)
		n = 0;
	free(rows);
	return n > 0;
}

int hb_fid_model_load(struct hb_fid_model *f, struct hb_profdb *db, const struct hb_model *m, struct hb_error *err)
{
	struct hb_gradstats_row *rows = NULL;
	const char *path = db ? hb_profdb_path(db) : "(no profile database)";
	int n = 0;

	memset(f, 0, sizeof(*f));
	if (db && hb_profdb_get_gradstats(db, m->name, &rows, &n, err) < 0)
		return -1;
	if (n == 0) {
		free(rows);
		return hb_input_error(err,
				      "%s: model '%s' has no gradient statistics; Pollux fidelity needs the "
				      "artifact's validation runs (`hetbatch import pollux DIR`)",
				      path, m->name);
	}
	f->max_epochs = (int)lround(m->target_epochs);
	if (f->max_epochs < 1 || fabs(m->target_epochs - f->max_epochs) > 1e-9) {
		free(rows);
		return hb_input_error(err, "model '%s': field 'target_epochs': value %g: Pollux fidelity needs a whole "
					   "number of epochs >= 1", m->name, m->target_epochs);
	}
	if (build_runs(f, rows, n, path, m->name, err) < 0)
		goto fail;
	free(rows);
	rows = NULL;
	f->m0 = f->runs[0].batch;
	f->pinned_batch = strcmp(m->name, "ncf") == 0 ? NCF_PINNED_BATCH : 0;
	f->bound = calloc((size_t)f->max_epochs + 1, sizeof(double));
	if (!f->bound) {
		hb_runtime_error(err, "fidelity: gradstats of %s: out of memory", m->name);
		goto fail;
	}
	/* Application.get_progress: the fewest M0-iterations any run needed. */
	for (int e = 1; e <= f->max_epochs; e++) {
		double b = INFINITY;

		for (int i = 0; i < f->nruns; i++) {
			if (f->runs[i].nepochs < e) {
				hb_input_error(err,
					       "%s: gradstats of model '%s', batch %d: %d epochs, Pollux fidelity needs "
					       "target_epochs = %d",
					       path, m->name, f->runs[i].batch, f->runs[i].nepochs, f->max_epochs);
				goto fail;
			}
			if (f->runs[i].progress[e - 1] < b)
				b = f->runs[i].progress[e - 1];
		}
		if (!(b > f->bound[e - 1])) {
			hb_input_error(err, "%s: gradstats of model '%s': progress does not increase at epoch %d (%g)",
				       path, m->name, e - 1, b);
			goto fail;
		}
		f->bound[e] = b;
	}
	return 0;
fail:
	free(rows);
	hb_fid_model_free(f);
	return -1;
}

/* The two validation runs bracketing batch (the same run at or outside the
 * validated range: the artifact asserts the batch is validated, its batch
 * rule keeps it within [M0, max batch], and so does clamping). */
static void bracket(const struct hb_fid_model *f, double batch, const struct hb_fid_run **plo,
		    const struct hb_fid_run **phi)
{
	const struct hb_fid_run *lo = &f->runs[0], *hi = &f->runs[f->nruns - 1];

	if (batch <= lo->batch) {
		hi = lo;
	} else if (batch >= hi->batch) {
		lo = hi;
	} else {
		for (int i = 1; i < f->nruns; i++)
			if (f->runs[i].batch >= batch) {
				hi = &f->runs[i];
				lo = &f->runs[i - 1];
				break;
			}
	}
	*plo = lo;
	*phi = hi;
}

double hb_fid_iterations(const struct hb_fid_model *f, double batch, long epoch)
{
	const struct hb_fid_run *lo, *hi;
	long elo, ehi;

	bracket(f, batch, &lo, &hi);
	elo = epoch < lo->nepochs ? epoch : lo->nepochs - 1;
	ehi = epoch < hi->nepochs ? epoch : hi->nepochs - 1;
	if (lo == hi || batch <= lo->batch)
		return lo->iteration[elo];
	if (batch >= hi->batch)
		return hi->iteration[ehi];
	return ((batch - lo->batch) * hi->iteration[ehi] + (hi->batch - batch) * lo->iteration[elo]) /
	       (double)(hi->batch - lo->batch);
}

/* grad_sqr and grad_var at (batch, epoch), Application.get_grad_stats. */
static void stats_at(const struct hb_fid_model *f, double batch, long epoch, double *sqr, double *var)
{
	const struct hb_fid_run *lo, *hi;
	long elo, ehi;

	bracket(f, batch, &lo, &hi);
	elo = epoch < lo->nepochs ? epoch : lo->nepochs - 1;
	ehi = epoch < hi->nepochs ? epoch : hi->nepochs - 1;
	if (lo == hi || batch <= lo->batch) {
		*sqr = lo->sqr[elo];
		*var = lo->var[elo];
	} else if (batch >= hi->batch) {
		*sqr = hi->sqr[ehi];
		*var = hi->var[ehi];
	} else {
		double d = hi->batch - lo->batch;

		*sqr = ((batch - lo->batch) * hi->sqr[ehi] + (hi->batch - batch) * lo->sqr[elo]) / d;
		*var = ((batch - lo->batch) * hi->var[ehi] + (hi->batch - batch) * lo->var[elo]) / d;
	}
}

void hb_fid_set_local_range(struct hb_fid_model *f, const struct hb_perf_measured *m, const struct hb_model *model,
			    long min_lbs, long max_gbs)
{
	int lo, hi;

	hb_perf_measured_local_range(m, &lo, &hi);
	if (model->max_lbs > 0 && (hi == 0 || model->max_lbs < hi))
		hi = (int)model->max_lbs;
	f->min_local = lo > 0 ? lo : (int)min_lbs;
	f->max_local = hi > 0 ? hi : (int)max_gbs;
}

void hb_fid_sia_local_range(const struct hb_perf_measured *m, const char *model, const char *gpu, int *lo, int *hi)
{
	hb_perf_measured_local_range(m, lo, hi);
	/* Application.__init__: "if self.name == 'deepspeech2' and
	 * cluster_suffix == 'rtx'", the one explicit cap of Sia's table */
	if (*hi > 57 && strcmp(model, "deepspeech2") == 0 && strcmp(gpu, "rtx-2080ti") == 0)
		*hi = 57;
}

double hb_fid_gain(const struct hb_fid_model *f, double batch, long epoch)
{
	double sqr, var, scale = batch / f->m0;

	stats_at(f, batch, epoch, &sqr, &var);
	if (!(var + sqr > 0))
		return scale; /* no statistics: perfect scaling, as the formula's limit with var >> sqr */
	return (var + sqr) / (var / scale + sqr);
}

double hb_fid_phi(const struct hb_fid_model *f, double batch, long epoch)
{
	double sqr, var;

	stats_at(f, batch, epoch, &sqr, &var);
	if (!(sqr > 0))
		return 1e12; /* no signal measured: E = 1 at any batch, as the gain's limit */
	return f->m0 * var / sqr;
}

static long ceil_div(long a, long b)
{
	return (a + b - 1) / b;
}

long hb_fid_batch(long batch, int n, int max_local, long max_batch, long m0, int *atomic, int *accum)
{
	long local, count, a;
	int s;

	if (n < 1 || max_local < 1 || batch < 1) {
		*atomic = *accum = 0;
		return 0;
	}
	local = ceil_div(batch, n);
	s = (int)(ceil_div(local, max_local) - 1);
	if (n == 1 && batch > m0 && s < 1)
		s = 1;
	a = ceil_div(local, s + 1);
	count = (long)n * (s + 1);
	if (max_batch / count < a)
		a = max_batch / count;
	if (a < 1)
		a = 1;
	*atomic = (int)a;
	*accum = s;
	return (long)n * a * (s + 1);
}

int hb_fidelity_parse(const char *s, int *out)
{
	if (strcmp(s, "none") == 0 || strcmp(s, "hetbatch") == 0)
		*out = HB_FIDELITY_NONE;
	else if (strcmp(s, "pollux") == 0)
		*out = HB_FIDELITY_POLLUX;
	else if (strcmp(s, "easyscale") == 0)
		*out = HB_FIDELITY_EASYSCALE;
	else if (strcmp(s, "sia") == 0)
		*out = HB_FIDELITY_SIA;
	else
		return -1;
	return 0;
}

const char *hb_fidelity_name(int f)
{
	return f == HB_FIDELITY_POLLUX ? "pollux" : f == HB_FIDELITY_EASYSCALE ? "easyscale" : f == HB_FIDELITY_SIA ? "sia"
														  : "none";
}

/* One application's constants of Sia's simulator. */
struct sia_app {
	const char *name;
	double rescale_s;  /* Application.rescale_time */
	double slowdown;   /* SLOWDOWNS[app] */
	double penalty_s;  /* sia.py get_restart_penalty */
};

static const struct sia_app sia_apps[] = {
	{ "cifar10", 50.0, 1.8, 30.0 },   { "deepspeech2", 25.0, 1.2, 25.0 }, { "bert", 120.0, 1.2, 120.0 },
	{ "yolov3", 80.0, 1.2, 45.0 },    { "imagenet", 250.0, 1.2, 250.0 },  { "ncf", 15.0, 1.5, 30.0 },
};

static const struct sia_app *sia_app(const char *model)
{
	for (size_t i = 0; model && i < sizeof(sia_apps) / sizeof(sia_apps[0]); i++)
		if (strcmp(sia_apps[i].name, model) == 0)
			return &sia_apps[i];
	return NULL;
}

double hb_fid_sia_rescale_s(const char *model)
{
	const struct sia_app *a = sia_app(model);

	return a ? a->rescale_s : 30.0; /* Application.__init__'s else branch */
}

double hb_fid_sia_restart_penalty_s(const char *model)
{
	const struct sia_app *a = sia_app(model);

	return a ? a->penalty_s : 30.0; /* get_restart_penalty's else branch */
}

double hb_fid_sia_slowdown(const char *model)
{
	const struct sia_app *a = sia_app(model);

	return a ? a->slowdown : 1.0;
}

int hb_fidelity_round_arrivals(int f)
{
	return f == HB_FIDELITY_POLLUX || f == HB_FIDELITY_EASYSCALE || f == HB_FIDELITY_SIA;
}
