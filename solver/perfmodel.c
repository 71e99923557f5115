/*
 * perfmodel.c: the IIDP iteration-time model, notes/jabas.md §2.2.
 *
 * Sections, in the order data flows: building a struct hb_perf; loading it
 * from the profile database; prepare (throughput fits, OWS/SWS); evaluation
 * (fwd+bwd, all-reduce, the per-GPU line base + n_GA step).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "analytic.h"      /* defines: hb_analytic_mem_bytes (the "does not fit" numbers) */
#include "perf_measured.h"
#include "perfmodel.h"
#include "profdb.h"
#include "strutil.h"

/* ---- building ---------------------------------------------------------- */

void hb_perf_init(struct hb_perf *p, const char *model, int min_lbs)
{
	memset(p, 0, sizeof(*p));
	hb_strlcpy(p->model, model ? model : "", sizeof(p->model));
	p->min_lbs = min_lbs;
	p->sync_request = HB_SYNC_AUTO;
	p->artifact_rounding = 1;
}

void hb_perf_free(struct hb_perf *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->ngpus; i++)
		free(p->gpus[i].lbs);
	free(p->gpus);
	free(p->nodes);
	free(p->bucket_bytes);
	for (int i = 0; p->measured_gpu && i < p->ngpus; i++)
		hb_perf_measured_free(p->measured_gpu[i]);
	free(p->measured_gpu);
	memset(p, 0, sizeof(*p));
}

int hb_perf_add_gpu(struct hb_perf *p, const char *name, int *idx, struct hb_error *err)
{
	struct hb_perf_gpu *g;

	for (int i = 0; i < p->ngpus; i++) {
		if (strcmp(p->gpus[i].name, name) == 0) {
			*idx = i;
			return 0;
		}
	}
	g = realloc(p->gpus, (size_t)(p->ngpus + 1) * sizeof(*g));
	if (!g)
		return hb_runtime_error(err, "perf model %s: out of memory adding GPU '%s'", p->model, name);
	p->gpus = g;
	memset(&g[p->ngpus], 0, sizeof(*g));
	hb_strlcpy(g[p->ngpus].name, name, sizeof(g[p->ngpus].name));
	*idx = p->ngpus++;
	p->prepared = 0;
	return 0;
}

static int valid_time(double t)
{
	return isfinite(t) && t >= 0.0;
}

int hb_perf_add_lbs(struct hb_perf *p, int gpu, int local_bs, int n_max, const struct hb_perf_point *pts,
		    int npts, struct hb_error *err)
{
	struct hb_perf_gpu *g;
	struct hb_perf_lbs *l = NULL;

	if (gpu < 0 || gpu >= p->ngpus)
		return hb_input_error(err, "perf model %s: GPU index %d out of range", p->model, gpu);
	g = &p->gpus[gpu];
	if (local_bs <= 0)
		return hb_input_error(err, "perf model %s, GPU %s: local batch %d must be > 0", p->model, g->name,
				      local_bs);
	if (n_max < 0 || n_max > HB_PERF_MAX_VSW)
		return hb_input_error(err, "perf model %s, GPU %s, local batch %d: n_max %d outside [0, %d]",
				      p->model, g->name, local_bs, n_max, HB_PERF_MAX_VSW);
	for (int i = 0; i < g->nlbs; i++)
		if (g->lbs[i].local_bs == local_bs)
			l = &g->lbs[i];
	if (!l) {
		if (g->nlbs == g->cap_lbs) {
			int cap = g->cap_lbs ? 2 * g->cap_lbs : 8;
			struct hb_perf_lbs *nl = realloc(g->lbs, (size_t)cap * sizeof(*nl));
			if (!nl)
				return hb_runtime_error(err, "perf model %s: out of memory", p->model);
			g->lbs = nl;
			g->cap_lbs = cap;
		}
		l = &g->lbs[g->nlbs++];
		memset(l, 0, sizeof(*l));
		l->local_bs = local_bs;
	}
	l->n_max = n_max;
	for (int i = 0; i < npts; i++) {
		const struct hb_perf_point *q = &pts[i];
		int slot = -1;

		if (q->n_vsw < 1 || q->n_vsw > HB_PERF_MAX_VSW)
			return hb_input_error(err, "perf model %s, GPU %s, local batch %d: n_vsw %d outside [1, %d]",
					      p->model, g->name, local_bs, q->n_vsw, HB_PERF_MAX_VSW);
		if (!valid_time(q->fwd_s) || !valid_time(q->bwd_s) || !valid_time(q->data_s) ||
		    !valid_time(q->update_s) || !valid_time(q->copy_s) || !valid_time(q->bn_s) ||
		    q->fwd_s + q->bwd_s <= 0.0)
			return hb_input_error(err,
					      "perf model %s, GPU %s, local batch %d, n_vsw %d: times must be finite and "
					      ">= 0 with fwd+bwd > 0",
					      p->model, g->name, local_bs, q->n_vsw);
		for (int j = 0; j < l->npts; j++)
			if (l->pts[j].n_vsw == q->n_vsw)
				slot = j;
		if (slot < 0) {
			if (l->npts == HB_PERF_MAX_POINTS)
				return hb_input_error(err, "perf model %s, GPU %s, local batch %d: more than %d points",
						      p->model, g->name, local_bs, HB_PERF_MAX_POINTS);
			slot = l->npts++;
		}
		l->pts[slot] = *q;
	}
	p->prepared = 0;
	return 0;
}

int hb_perf_add_node(struct hb_perf *p, const char *name, int gpu, int ngpus, const struct hb_perf_ar *intra,
		     const struct hb_perf_ar *inter, struct hb_error *err)
{
	struct hb_perf_node *n;

	if (gpu < 0 || gpu >= p->ngpus)
		return hb_input_error(err, "perf model %s, node %s: GPU index %d out of range", p->model, name, gpu);
	if (ngpus <= 0)
		return hb_input_error(err, "perf model %s, node %s: %d GPUs", p->model, name, ngpus);
	n = realloc(p->nodes, (size_t)(p->nnodes + 1) * sizeof(*n));
	if (!n)
		return hb_runtime_error(err, "perf model %s: out of memory adding node %s", p->model, name);
	p->nodes = n;
	n = &p->nodes[p->nnodes++];
	memset(n, 0, sizeof(*n));
	hb_strlcpy(n->name, name, sizeof(n->name));
	n->gpu = gpu;
	n->ngpus = ngpus;
	if (intra)
		n->intra = *intra;
	if (inter)
		n->inter = *inter;
	p->prepared = 0;
	return 0;
}

int hb_perf_set_buckets(struct hb_perf *p, const double *bytes, int n, struct hb_error *err)
{
	double *b;

	if (n <= 0)
		return hb_input_error(err, "perf model %s: needs at least one gradient bucket", p->model);
	for (int i = 0; i < n; i++)
		if (!isfinite(bytes[i]) || bytes[i] <= 0.0)
			return hb_input_error(err, "perf model %s: bucket %d has %g bytes", p->model, i, bytes[i]);
	b = malloc((size_t)n * sizeof(*b));
	if (!b)
		return hb_runtime_error(err, "perf model %s: out of memory", p->model);
	memcpy(b, bytes, (size_t)n * sizeof(*b));
	free(p->bucket_bytes);
	p->bucket_bytes = b;
	p->nbuckets = n;
	p->prepared = 0;
	return 0;
}

/* ---- loading from the profile database --------------------------------- */

void hb_perf_opts_default(struct hb_perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sync = HB_SYNC_AUTO;
	o->k_source = HB_PERF_K_FIT;
	o->artifact_rounding = -1;
}

/* A compute row as a model point.  Rows that only carry total_s (Pollux's
 * single-GPU step times) are split with the catalog's forward fraction. */
static void row_point(const struct hb_compute_row *r, const struct hb_model *m, struct hb_perf_point *q)
{
	memset(q, 0, sizeof(*q));
	q->n_vsw = r->n_vsw;
	q->fwd_s = r->fwd_s;
	q->bwd_s = r->bwd_s;
	q->data_s = r->data_s;
	q->update_s = r->update_s;
	q->copy_s = r->copy_s;
	q->bn_s = r->bn_s;
	if (r->fwd_s + r->bwd_s <= 0.0 && r->total_s > 0.0) {
		double fb = r->total_s - r->data_s - r->update_s - r->copy_s - r->bn_s * r->n_vsw;
		if (fb <= 0.0)
			fb = r->total_s;
		q->fwd_s = fb * m->fwd_fraction;
		q->bwd_s = fb - q->fwd_s;
	}
}

static int cmp_lbs(const void *a, const void *b)
{
	return ((const struct hb_perf_lbs *)a)->local_bs - ((const struct hb_perf_lbs *)b)->local_bs;
}

/* Linear interpolation of two profiled local batches' points at B_L = x,
 * for the VSW counts both have. */
static int lerp_points(const struct hb_perf_lbs *lo, const struct hb_perf_lbs *hi, int x, struct hb_perf_point *out)
{
	double w = (double)(x - lo->local_bs) / (double)(hi->local_bs - lo->local_bs);
	int n = 0;

	for (int a = 0; a < lo->npts; a++)
		for (int b = 0; b < hi->npts; b++) {
			const struct hb_perf_point *u = &lo->pts[a], *v = &hi->pts[b];

			if (u->n_vsw != v->n_vsw)
				continue;
			out[n].n_vsw = u->n_vsw;
#define L(f) out[n].f = u->f + w * (v->f - u->f)
			L(fwd_s);
			L(bwd_s);
			L(data_s);
			L(update_s);
			L(copy_s);
			L(bn_s);
#undef L
			n++;
		}
	return n;
}

/*
 * A profile measured on another grid of local batches than the multiples of
 * minB_L the solvers use (Pollux's placements.csv steps by sqrt(2): cifar10
 * 32, 45, 64, 91, 129, ...) would leave the solvers only the few profiled
 * values that happen to be multiples (32, 64, 1024), so a requested batch
 * would be rounded to a far-away B_L.  The Pollux artifact interpolates step
 * time linearly in the local batch between measured points; we do the same
 * onto the multiples of minB_L strictly inside the profiled range, and only
 * for such off-grid profiles (JABAS's and the analytic profiles are on the
 * grid and stay exactly as measured); above 16 minB_L the step grows with
 * B_L (see below).  An interpolated B_L fits as many VSWs
 * as the larger neighbour (memory grows with B_L).
 */
static int fill_grid(struct hb_perf *p, int gi, int min_lbs, struct hb_error *err)
{
	struct hb_perf_gpu *g = &p->gpus[gi];
	struct hb_perf_lbs *copy;
	int n = g->nlbs, off = 0, rc = 0;

	for (int i = 0; i < n; i++)
		off |= g->lbs[i].local_bs % min_lbs != 0;
	if (!off || n < 2 || min_lbs < 1)
		return 0;
	/* hb_perf_add_lbs may move g->lbs: work from a sorted copy. */
	copy = malloc(sizeof(*copy) * (size_t)n);
	if (!copy)
		return hb_runtime_error(err, "perf model %s: out of memory", p->model);
	memcpy(copy, g->lbs, sizeof(*copy) * (size_t)n);
	qsort(copy, (size_t)n, sizeof(*copy), cmp_lbs);
	for (int i = 0; i + 1 < n && rc == 0; i++) {
		const struct hb_perf_lbs *lo = &copy[i], *hi = &copy[i + 1];
		int n_max = hi->n_max < lo->n_max ? hi->n_max : lo->n_max;

		if (n_max < 1)
			continue;
		/* Steps of minB_L, or of about lo/16 where that is coarser, so a
		 * grid up to NCF's 32768 stays a few hundred entries while any
		 * B_L is within about 3 % of one. */
		int step = (lo->local_bs / 16 / min_lbs) * min_lbs;

		if (step < min_lbs)
			step = min_lbs;
		for (int x = (lo->local_bs / step + 1) * step; x < hi->local_bs && rc == 0; x += step) {
			struct hb_perf_point pts[HB_PERF_MAX_POINTS];
			int np = lerp_points(lo, hi, x, pts);

			if (np > 0)
				rc = hb_perf_add_lbs(p, gi, x, n_max, pts, np, err);
		}
	}
	free(copy);
	return rc;
}

/* No compute row for (gpu, model).  When the memory profile says that no
 * local batch fits even one worker, the model does not fit the GPU, and
 * profiling again cannot help: say so, with the numbers. */
static int no_compute_error(struct hb_profdb *db, const struct hb_gpu *g, const struct hb_model *m, int min_lbs,
			    const struct hb_memory_row *mr, int nm, struct hb_error *err)
{
	int fits = 0;

	for (int j = 0; j < nm; j++)
		fits |= mr[j].max_vsw >= 1;
	if (nm == 0 || fits)
		return hb_input_error(err,
				      "profile database %s: no compute profile for GPU '%s' and model '%s' (run `hetbatch "
				      "profile` or import one)",
				      hb_profdb_label(db), g->name, m->name);
	return hb_input_error(err,
			      "model '%s' does not fit GPU '%s' (%.1f GB) at any local batch: its memory profile (source "
			      "%s) fits not even one worker at any multiple of minB_L %d, and the analytic model puts "
			      "local batch %d with one worker at %.1f GB (weights, gradients, optimizer state, "
			      "activations).  Profiling cannot change this: use GPUs with more memory or a smaller "
			      "model (profiles: %s)",
			      m->name, g->name, g->mem_bytes / 1e9, mr[0].source, min_lbs, min_lbs,
			      hb_analytic_mem_bytes(g, m, min_lbs, 1) / 1e9, hb_profdb_label(db));
}

static int load_gpu(struct hb_profdb *db, const struct hb_gpu *g, const struct hb_model *m, struct hb_perf *p,
		    int gi, int *all_jabas, struct hb_error *err)
{
	const char *gname = p->gpus[gi].name;
	struct hb_compute_row *cr = NULL;
	struct hb_memory_row *mr = NULL;
	int nc = 0, nm = 0, rc = -1;

	if (hb_profdb_get_compute(db, gname, m->name, &cr, &nc, err) != 0 ||
	    hb_profdb_get_memory(db, gname, m->name, &mr, &nm, err) != 0)
		goto out;
	if (nc == 0) {
		no_compute_error(db, g, m, p->min_lbs, mr, nm, err);
		goto out;
	}
	hb_strlcpy(p->gpus[gi].source, cr[0].source, sizeof(p->gpus[gi].source));
	p->gpus[gi].run_id = cr[0].run_id;
	/* Rows come ordered by local_bs, n_vsw: one entry per local batch. */
	for (int i = 0; i < nc;) {
		struct hb_perf_point pts[HB_PERF_MAX_POINTS];
		int lbs = cr[i].local_bs, np = 0, n_max = 0, top = 0;

		for (; i < nc && cr[i].local_bs == lbs; i++) {
			if (np == HB_PERF_MAX_POINTS) {
				hb_input_error(err, "profile database %s: GPU '%s', model '%s', local batch %d: more "
						    "than %d n_vsw points",
					       hb_profdb_label(db), gname, m->name, lbs, HB_PERF_MAX_POINTS);
				goto out;
			}
			row_point(&cr[i], m, &pts[np]);
			if (strcmp(cr[i].source, "import:jabas") != 0)
				*all_jabas = 0;
			if (cr[i].n_vsw > top)
				top = cr[i].n_vsw;
			np++;
		}
		/* n_max from the memory profile; without one, what was run fits. */
		n_max = top;
		for (int j = 0; j < nm; j++)
			if (mr[j].local_bs == lbs)
				n_max = mr[j].max_vsw;
		if (n_max > HB_PERF_MAX_VSW)
			n_max = HB_PERF_MAX_VSW;
		if (hb_perf_add_lbs(p, gi, lbs, n_max, pts, np, err) != 0) {
			hb_error_prefix(err, "profile database %s: ", hb_profdb_label(db));
			goto out;
		}
	}
	rc = fill_grid(p, gi, p->min_lbs, err);
out:
	free(cr);
	free(mr);
	return rc;
}

static int load_ar(struct hb_profdb *db, const char *scope, const char *link, double cluster_bw, int k_source,
		   struct hb_perf_ar *out, struct hb_error *err)
{
	struct hb_allreduce_fit f;
	int found = 0;

	memset(out, 0, sizeof(*out));
	hb_strlcpy(out->link, link, sizeof(out->link));
	if (!link[0])
		return 0;
	if (hb_profdb_get_allreduce_fit(db, scope, link, &f, &found, err) != 0)
		return -1;
	if (!found)
		return 0; /* an error only if an allocation needs it (hb_perf_comm_eval) */
	out->have = 1;
	out->alpha = f.alpha;
	out->beta_ms = f.beta;
	out->k_bw = (k_source == HB_PERF_K_FIT && f.bandwidth > 0.0) || !(cluster_bw > 0.0) ? f.bandwidth : cluster_bw;
	return 0;
}

/* 1 and the fits copied when an earlier node of cl (already added to p, in
 * cluster order) has the same intra and inter links and bandwidths as node
 * i: load_ar would read the same rows and derive the same values. */
static int same_links(const struct hb_cluster *cl, int i, const struct hb_perf *p, struct hb_perf_ar *intra,
		      struct hb_perf_ar *inter)
{
	const struct hb_node *nd = &cl->nodes[i];

	for (int j = 0; j < i && j < p->nnodes; j++) {
		const struct hb_node *o = &cl->nodes[j];

		if (strcmp(o->intra_link, nd->intra_link) == 0 && strcmp(o->inter_link, nd->inter_link) == 0 &&
		    o->intra_bw == nd->intra_bw && o->inter_bw == nd->inter_bw) {
			*intra = p->nodes[j].intra;
			*inter = p->nodes[j].inter;
			return 1;
		}
	}
	return 0;
}

int hb_perf_load(struct hb_profdb *db, const struct hb_catalog *cat, const struct hb_cluster *cl,
		 const struct hb_model *model, const struct hb_perf_opts *opts, struct hb_perf *p,
		 struct hb_error *err)
{
	struct hb_perf_opts dflt;
	double *bytes = NULL;
	int nb = 0, all_jabas = 1;

	if (!opts) {
		hb_perf_opts_default(&dflt);
		opts = &dflt;
	}
	hb_perf_init(p, model->name, opts->min_lbs > 0 ? opts->min_lbs : (int)model->min_lbs);
	p->sync_request = opts->sync;
	p->zero_offload = model->opt_offload != 0;
	p->artifact_rounding = opts->artifact_rounding;
	for (int i = 0; i < cl->nnodes; i++) {
		const struct hb_node *nd = &cl->nodes[i];
		struct hb_perf_ar intra, inter;
		int before = p->ngpus, gi;

		if (nd->gpu < 0 || nd->gpu >= cat->ngpus) {
			hb_input_error(err, "cluster %s, node %s: GPU index %d outside the catalog", cl->name, nd->name,
				       nd->gpu);
			goto fail;
		}
		if (hb_perf_add_gpu(p, cat->gpus[nd->gpu].name, &gi, err) != 0)
			goto fail;
		if (p->ngpus > before && load_gpu(db, &cat->gpus[nd->gpu], model, p, gi, &all_jabas, err) != 0)
			goto fail;
		/* Nodes of a cluster mostly share their links: a fit already loaded
		 * for the same link and bandwidth is copied rather than queried
		 * again (a 384-node cluster made 768 queries per model load, and
		 * rho's isolated runs load a model per job). */
		if (!same_links(cl, i, p, &intra, &inter) &&
		    (load_ar(db, "intra", nd->intra_link, nd->intra_bw, opts->k_source, &intra, err) != 0 ||
		     load_ar(db, "inter", nd->inter_link, nd->inter_bw, opts->k_source, &inter, err) != 0))
			goto fail;
		if (hb_perf_add_node(p, nd->name, gi, nd->ngpus, &intra, &inter, err) != 0)
			goto fail;
	}
	/* Each GPU type's measured DDP steps, if any were imported: the truth
	 * of the one-type layouts they cover, also on a cluster of several
	 * types (a measured T4 row times a T4-only allocation beside A100
	 * nodes as it does on a T4 cluster). */
	if (!opts->no_measured && p->ngpus > 0) {
		if (!(p->measured_gpu = calloc((size_t)p->ngpus, sizeof(*p->measured_gpu)))) {
			hb_runtime_error(err, "perf model %s: out of memory", model->name);
			goto fail;
		}
		for (int g = 0; g < p->ngpus; g++)
			if (hb_perf_measured_load(db, model->name, p->gpus[g].name, &p->measured_gpu[g], err) != 0)
				goto fail;
		if (p->ngpus == 1)
			p->measured = p->measured_gpu[0];
	}
	if (hb_profdb_get_buckets(db, model->name, &bytes, &nb, err) != 0)
		goto fail;
	if (nb > 0) {
		if (hb_perf_set_buckets(p, bytes, nb, err) != 0)
			goto fail;
	} else if (model->nbuckets > 0) {
		if (hb_perf_set_buckets(p, model->buckets, model->nbuckets, err) != 0)
			goto fail;
	} else {
		hb_input_error(err, "model %s: no gradient buckets in %s or the catalog", model->name,
			       hb_profdb_label(db));
		goto fail;
	}
	free(bytes);
	bytes = NULL;
	if (opts->artifact_rounding < 0)
		p->artifact_rounding = all_jabas;
	if (hb_perf_prepare(p, err) != 0)
		goto fail;
	return 0;
fail:
	free(bytes);
	hb_perf_free(p);
	return -1;
}

/* ---- prepare ----------------------------------------------------------- */

/* Python's round(x, d) as the artifact calls it (nearest, ties to even). */
static double round_dec(double x, int d)
{
	double s = pow(10.0, d);
	return rint(x * s) / s;
}

int hb_perf_select_sync(const double *bucket_bytes, int n)
{
	double sum = 0.0;

	if (n < 2)
		return HB_SYNC_OWS;
	for (int i = 0; i < n - 1; i++)
		sum += bucket_bytes[i] / 1048576.0;
	/* int(): the artifact truncates the mean (in MiB) before dividing. */
	return floor(sum / (n - 1)) / (HB_PERF_BUCKET_CAP_BYTES / 1048576.0) > HB_PERF_SWS_THRESHOLD ? HB_SYNC_SWS
												     : HB_SYNC_OWS;
}

static int cmp_point(const void *a, const void *b)
{
	return ((const struct hb_perf_point *)a)->n_vsw - ((const struct hb_perf_point *)b)->n_vsw;
}


static int prepare_lbs(const struct hb_perf *p, const struct hb_perf_gpu *g, struct hb_perf_lbs *l,
		       struct hb_error *err)
{
	const struct hb_perf_point *top;
	double x[HB_PERF_MAX_POINTS], y[HB_PERF_MAX_POINTS];
	int rnd = p->artifact_rounding;

	l->n_cap = 0;
	if (l->n_max == 0)
		return 0; /* does not fit: never evaluated */
	if (l->npts == 0)
		return hb_input_error(err, "perf model %s, GPU %s, local batch %d: n_max %d but no measured point",
				      p->model, g->name, l->local_bs, l->n_max);
	qsort(l->pts, (size_t)l->npts, sizeof(l->pts[0]), cmp_point);
	if (l->pts[0].n_vsw != 1)
		return hb_input_error(err,
				      "perf model %s, GPU %s, local batch %d: no point with n_vsw = 1 (needed for thp_1)",
				      p->model, g->name, l->local_bs);
	top = &l->pts[l->npts - 1];
	/* Constants come from the profile with the most VSWs (notes §2.2). */
	l->zeta = top->fwd_s / (top->fwd_s + top->bwd_s);
	l->update_s = top->update_s;
	l->copy1_s = top->n_vsw > 1 ? top->copy_s / (top->n_vsw - 1) : 0.0;
	l->bn_s = top->bn_s;
	l->thp1 = l->local_bs / (l->pts[0].fwd_s + l->pts[0].bwd_s);
	if (rnd)
		l->thp1 = round_dec(l->thp1, 2);
	if (!(l->thp1 > 0.0))
		return hb_input_error(err, "perf model %s, GPU %s, local batch %d: one-VSW throughput rounds to 0",
				      p->model, g->name, l->local_bs);
	for (int i = 0; i < l->npts; i++) {
		const struct hb_perf_point *q = &l->pts[i];
		double v = (double)l->local_bs * q->n_vsw / (q->fwd_s + q->bwd_s) / l->thp1;

		x[i] = log((double)q->n_vsw);
		y[i] = rnd ? round_dec(v, 3) : v;
	}
	l->table = top->n_vsw < 3;
	if (l->table) {
		/* The artifact's "real" model indexes the measured list by n-1,
		 * so only a gap-free prefix 1..k of measured n is usable. */
		int k = 0;
		memset(l->norm, 0, sizeof(l->norm));
		for (int i = 0; i < l->npts && l->pts[i].n_vsw == i + 1; i++) {
			l->norm[i + 1] = y[i];
			k = i + 1;
		}
		l->n_cap = l->n_max < k ? l->n_max : k;
		l->a = l->b = 0.0;
	} else {
		double c0, c1, cov00, cov01, cov11, sumsq;

		if (gsl_fit_linear(x, 1, y, 1, (size_t)l->npts, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) != 0)
			return hb_runtime_error(err, "perf model %s, GPU %s, local batch %d: throughput fit failed",
						p->model, g->name, l->local_bs);
		l->a = c1;
		l->b = c0;
		l->n_cap = l->n_max;
	}
	for (int n = 1; n <= l->n_cap; n++) {
		double v = hb_perf_norm_thp(l, n);
		if (!(v > 0.0) || !isfinite(v))
			return hb_input_error(err,
					      "perf model %s, GPU %s, local batch %d: normalised throughput %g at n_vsw %d "
					      "(fit a=%g b=%g) is not positive",
					      p->model, g->name, l->local_bs, v, n, l->a, l->b);
	}
	return 0;
}

int hb_perf_prepare(struct hb_perf *p, struct hb_error *err)
{
	double sum = 0.0;

	p->prepared = 0;
	if (p->min_lbs <= 0)
		return hb_input_error(err, "perf model %s: min local batch %d must be > 0", p->model, p->min_lbs);
	if (p->nbuckets <= 0)
		return hb_input_error(err, "perf model %s: no gradient buckets", p->model);
	for (int i = 0; i < p->ngpus; i++) {
		struct hb_perf_gpu *g = &p->gpus[i];
		qsort(g->lbs, (size_t)g->nlbs, sizeof(g->lbs[0]), cmp_lbs);
		for (int j = 0; j < g->nlbs; j++)
			if (prepare_lbs(p, g, &g->lbs[j], err) != 0)
				return -1;
	}
	for (int i = 0; i < p->nnodes; i++) {
		const struct hb_perf_node *n = &p->nodes[i];
		const struct hb_perf_ar *ar[2] = { &n->intra, &n->inter };
		for (int j = 0; j < 2; j++)
			if (ar[j]->have && (!isfinite(ar[j]->alpha) || !isfinite(ar[j]->beta_ms) || !(ar[j]->k_bw > 0.0)))
				return hb_input_error(err, "perf model %s, node %s: %s all-reduce fit (link %s) is invalid",
						      p->model, n->name, j ? "inter" : "intra", ar[j]->link);
	}
	p->sync = p->sync_request == HB_SYNC_AUTO ? hb_perf_select_sync(p->bucket_bytes, p->nbuckets)
						  : p->sync_request;
	for (int i = 0; i < p->nbuckets; i++)
		sum += p->bucket_bytes[i];
	p->tau = p->sync == HB_SYNC_SWS ? 1.0 : p->bucket_bytes[p->nbuckets - 1] / sum;
	p->prepared = 1;
	return 0;
}

/* ---- evaluation -------------------------------------------------------- */

const struct hb_perf_lbs *hb_perf_find_lbs(const struct hb_perf *p, int gpu, int local_bs)
{
	const struct hb_perf_gpu *g;

	if (gpu < 0 || gpu >= p->ngpus)
		return NULL;
	g = &p->gpus[gpu];
	for (int i = 0; i < g->nlbs; i++)
		if (g->lbs[i].local_bs == local_bs)
			return &g->lbs[i];
	return NULL;
}

int hb_perf_max_lbs(const struct hb_perf *p, int gpu)
{
	int best = 0;

	if (gpu < 0 || gpu >= p->ngpus)
		return 0;
	for (int i = 0; i < p->gpus[gpu].nlbs; i++) {
		const struct hb_perf_lbs *l = &p->gpus[gpu].lbs[i];
		if (l->n_max >= 1 && l->local_bs > best)
			best = l->local_bs;
	}
	return best;
}

double hb_perf_norm_thp(const struct hb_perf_lbs *l, int n)
{
	if (l->table)
		return n >= 1 && n <= HB_PERF_MAX_POINTS ? l->norm[n] : 0.0;
	return l->a * log((double)n) + l->b;
}

double hb_perf_fb_s(const struct hb_perf *p, const struct hb_perf_lbs *l, int n)
{
	double t = (double)l->local_bs * n / (hb_perf_norm_thp(l, n) * l->thp1);
	return p->artifact_rounding ? round_dec(t, 4) : t;
}

double hb_perf_data_s(const struct hb_perf_lbs *l, int n)
{
	for (int i = 0; i < l->npts; i++)
		if (l->pts[i].n_vsw == n)
			return l->pts[i].data_s;
	return l->pts[0].data_s * n; /* pts[0] is n = 1 after prepare */
}

int hb_perf_alloc_gpus(const struct hb_perf *p, const int *alloc, int *n_gpus, int *n_nodes, struct hb_error *err)
{
	int g = 0, nn = 0;

	/* A node's record (large, and cold on a cluster of hundreds) is read
	 * only where the allocation has GPUs: an allocation spans a handful of
	 * nodes, and this runs for every iteration-time estimate. */
	for (int i = 0; i < p->nnodes; i++) {
		const int a = alloc[i];

		if (a == 0)
			continue;
		if (a < 0 || a > p->nodes[i].ngpus)
			return hb_input_error(err, "allocation: node %s gets %d GPUs, it has %d", p->nodes[i].name, a,
					      p->nodes[i].ngpus);
		g += a;
		nn++;
	}
	if (g == 0)
		return hb_input_error(err, "allocation: no GPU allocated");
	*n_gpus = g;
	if (n_nodes)
		*n_nodes = nn;
	return 0;
}

int hb_perf_comm_eval(const struct hb_perf *p, const int *alloc, int node, struct hb_perf_comm *out,
		      struct hb_error *err)
{
	int ng, nn;

	if (node < 0 || node >= p->nnodes)
		return hb_input_error(err, "perf model %s: node index %d out of range", p->model, node);
	if (hb_perf_alloc_gpus(p, alloc, &ng, &nn, err) != 0)
		return -1;
	return hb_perf_comm_eval_n(p, node, ng, nn, out, err);
}

int hb_perf_comm_eval_n(const struct hb_perf *p, int node, int ng, int nn, struct hb_perf_comm *out,
			struct hb_error *err)
{
	const struct hb_perf_ar *ar;

	if (node < 0 || node >= p->nnodes)
		return hb_input_error(err, "perf model %s: node index %d out of range", p->model, node);
	out->overlap_s = out->last_s = 0.0;
	/* every GPU of the allocation is a data-parallel rank of ZeRO-Offload */
	out->zero_ranks = p->zero_offload ? ng : 0;
	if (ng < 2)
		return 0; /* one GPU: no all-reduce runs at all */
	ar = nn > 1 ? &p->nodes[node].inter : &p->nodes[node].intra;
	if (!ar->have)
		return hb_input_error(err, "perf model %s: no %s-node all-reduce fit for node %s (link '%s'); measure "
				      "one (mpirun -np N hetbatch profile allreduce --link %s), import one (hetbatch "
				      "import nccl-tests), or add the analytic ones (hetbatch profile --analytic --gpus "
				      "GPU --db FILE)", p->model, nn > 1 ? "inter" : "intra", p->nodes[node].name, ar->link,
				      ar->link);
	for (int i = 0; i < p->nbuckets; i++) {
		double x_ms = p->bucket_bytes[i] * 4.0 * (ng - 1) / ng / ar->k_bw * 1000.0;
		double t = (ar->alpha * x_ms + ar->beta_ms) / 1000.0;
		if (i < p->nbuckets - 1)
			out->overlap_s += t;
		else
			out->last_s = t;
	}
	return 0;
}

int hb_perf_coef_eval(const struct hb_perf *p, const struct hb_perf_lbs *l, const struct hb_perf_comm *c,
		      int n_vsw, double tau, struct hb_perf_coef *out, struct hb_error *err)
{
	double fb, fwd, bwd, data, update = l->update_s;

	if (n_vsw < 1 || n_vsw > l->n_cap)
		return hb_input_error(err, "perf model %s, local batch %d: n_vsw %d outside [1, %d]", p->model,
				      l->local_bs, n_vsw, l->n_cap);
	fb = hb_perf_fb_s(p, l, n_vsw);
	fwd = fb * l->zeta;
	bwd = fb * (1.0 - l->zeta);
	data = hb_perf_data_s(l, n_vsw);
	/* ZeRO-Offload: this GPU's partition of the step (perfmodel.h) */
	if (c->zero_ranks > 1)
		update /= c->zero_ranks;
	out->base_s = data + l->bn_s * n_vsw + fwd + (bwd > c->overlap_s ? bwd : c->overlap_s) + c->last_s +
		      tau * (update + l->copy1_s * (n_vsw - 1));
	out->step_s = data + fwd + bwd;
	return 0;
}

/* hb_perf_iter_time's checks of everything but the allocation, in its
 * order; *l gets the node's entry for local_bs. */
static int iter_checks(const struct hb_perf *p, int node, int local_bs, int n_ga, const struct hb_perf_lbs **l,
		       struct hb_error *err)
{
	if (!p->prepared)
		return hb_input_error(err, "perf model %s: not prepared", p->model);
	if (node < 0 || node >= p->nnodes)
		return hb_input_error(err, "perf model %s: node index %d out of range", p->model, node);
	if (n_ga < 0)
		return hb_input_error(err, "perf model %s: n_GA %d < 0", p->model, n_ga);
	*l = hb_perf_find_lbs(p, p->nodes[node].gpu, local_bs);
	if (!*l || (*l)->n_max < 1)
		return hb_input_error(err, "perf model %s: GPU %s has no feasible profile at local batch %d", p->model,
				      p->gpus[p->nodes[node].gpu].name, local_bs);
	return 0;
}

/* The iteration time once checked, the allocation counted. */
static int iter_time(const struct hb_perf *p, const struct hb_perf_lbs *l, int node, int n_gpus, int n_nodes,
		     int n_vsw, int n_ga, double *iter_s, struct hb_error *err)
{
	struct hb_perf_comm c;
	struct hb_perf_coef k;

	if (hb_perf_comm_eval_n(p, node, n_gpus, n_nodes, &c, err) != 0 ||
	    hb_perf_coef_eval(p, l, &c, n_vsw, p->tau, &k, err) != 0)
		return -1;
	*iter_s = hb_perf_iter_s(&k, n_ga);
	return 0;
}

struct hb_perf_measured *hb_perf_measured_of(const struct hb_perf *p, const int *alloc, int *gpu)
{
	int g = -1;

	if (gpu)
		*gpu = -1;
	if (!p->measured_gpu)
		return NULL;
	for (int i = 0; i < p->nnodes; i++) {
		if (alloc[i] == 0)
			continue;
		if (g >= 0 && p->nodes[i].gpu != g)
			return NULL;
		g = p->nodes[i].gpu;
	}
	if (g < 0 || !p->measured_gpu[g])
		return NULL;
	if (gpu)
		*gpu = g;
	return p->measured_gpu[g];
}

int hb_perf_iter_time(const struct hb_perf *p, const int *alloc, int node, int local_bs, int n_vsw, int n_ga,
		      double *iter_s, struct hb_error *err)
{
	const struct hb_perf_lbs *l = NULL;
	int ng, nn;

	if (iter_checks(p, node, local_bs, n_ga, &l, err) != 0 || hb_perf_alloc_gpus(p, alloc, &ng, &nn, err) != 0)
		return -1;
	return iter_time(p, l, node, ng, nn, n_vsw, n_ga, iter_s, err);
}

int hb_perf_iter_time_n(const struct hb_perf *p, int node, int n_gpus, int n_nodes, int local_bs, int n_vsw,
			int n_ga, double *iter_s, struct hb_error *err)
{
	const struct hb_perf_lbs *l = NULL;

	if (iter_checks(p, node, local_bs, n_ga, &l, err) != 0)
		return -1;
	return iter_time(p, l, node, n_gpus, n_nodes, n_vsw, n_ga, iter_s, err);
}

int hb_perf_alloc_lbs(const struct hb_perf *p, const int *alloc, int **out, int *n, struct hb_error *err)
{
	int maxl = 0, cnt = 0, ng, nc;
	int *v;
	unsigned char *used, *ok;

	*out = NULL;
	*n = 0;
	if (hb_perf_alloc_gpus(p, alloc, &ng, NULL, err) != 0)
		return -1;
	/* Per GPU type used, not per node: a large cluster has hundreds of
	 * nodes and a handful of types. */
	used = calloc((size_t)(p->ngpus > 0 ? p->ngpus : 1), 1);
	if (!used)
		return hb_runtime_error(err, "perf model %s: out of memory", p->model);
	for (int i = 0; i < p->nnodes; i++)
		if (alloc[i] != 0)
			used[p->nodes[i].gpu] = 1;
	for (int t = 0; t < p->ngpus; t++) {
		int m;

		if (!used[t])
			continue;
		m = hb_perf_max_lbs(p, t);
		if (maxl == 0 || m < maxl)
			maxl = m;
	}
	if (maxl < p->min_lbs) {
		free(used);
		return 0;
	}
	nc = maxl / p->min_lbs;
	v = malloc((size_t)nc * sizeof(*v));
	ok = malloc((size_t)nc + 1);
	if (!v || !ok) {
		free(v);
		free(ok);
		free(used);
		return hb_runtime_error(err, "perf model %s: out of memory", p->model);
	}
	memset(ok, 1, (size_t)nc + 1);
	/* Candidate b = (k + 1) min_lbs is usable on type t when t's entry for b
	 * (the first, as hb_perf_find_lbs finds it) runs at least one VSW. */
	for (int t = 0; t < p->ngpus; t++) {
		const struct hb_perf_gpu *g = &p->gpus[t];
		unsigned char *seen, *good;

		if (!used[t])
			continue;
		seen = calloc((size_t)nc, 1);
		good = calloc((size_t)nc, 1);
		if (!seen || !good) {
			free(seen);
			free(good);
			free(v);
			free(ok);
			free(used);
			return hb_runtime_error(err, "perf model %s: out of memory", p->model);
		}
		for (int i = 0; i < g->nlbs; i++) {
			const struct hb_perf_lbs *l = &g->lbs[i];
			int k = l->local_bs / p->min_lbs - 1;

			if (l->local_bs % p->min_lbs != 0 || k < 0 || k >= nc || seen[k])
				continue;
			seen[k] = 1;
			good[k] = l->n_max >= 1 && l->n_cap >= 1;
		}
		for (int k = 0; k < nc; k++)
			ok[k] = ok[k] && good[k];
		free(seen);
		free(good);
	}
	for (int k = 0; k < nc; k++)
		if (ok[k])
			v[cnt++] = (k + 1) * p->min_lbs;
	free(ok);
	free(used);
	if (cnt == 0) {
		free(v);
		return 0;
	}
	*out = v;
	*n = cnt;
	return 0;
}
