/*
 * perf_measured.c: measured DDP step times (perf_measured.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp3.h"
#include "perf_measured.h"
#include "profdb.h"
#include "strutil.h"

static int cmp_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

/* "4444" from GPU counts per node, descending; -1 when a count has more
 * than one digit (Pollux's strings are one digit per node). */
/* The nonzero counts into v[64] in their order, their number into *nodes
 * and sum into *replicas; -1 when one exceeds a digit or the key's size. */
static int nonzero_counts(const int *counts, int n, size_t size, int *v, int *nodes, int *replicas)
{
	int k = 0;

	*nodes = *replicas = 0;
	for (int i = 0; i < n; i++) {
		if (counts[i] <= 0)
			continue;
		if (counts[i] > 9 || k == 64 || (size_t)k + 1 >= size)
			return -1;
		v[k++] = counts[i];
		*replicas += counts[i];
	}
	*nodes = k;
	return k;
}

static int placement_key(const int *counts, int n, char *key, size_t size, int *nodes, int *replicas)
{
	int v[64], k = nonzero_counts(counts, n, size, v, nodes, replicas);

	if (k < 0)
		return -1;
	qsort(v, (size_t)k, sizeof(int), cmp_desc);
	for (int i = 0; i < k; i++)
		key[i] = (char)('0' + v[i]);
	key[k] = '\0';
	return k > 0 ? 0 : -1;
}

/* The artifact's key (applications.py get_throughput): the nonzero counts in
 * their order, at their lexicographically least rotation; -1 as
 * placement_key. */
static int rotation_key(const int *counts, int n, char *key, size_t size, int *nodes, int *replicas)
{
	int v[64], k = nonzero_counts(counts, n, size, v, nodes, replicas), best = 0;

	if (k < 0)
		return -1;
	for (int r = 1; r < k; r++)
		for (int i = 0; i < k; i++) {
			const int a = v[(r + i) % k], b = v[(best + i) % k];

			if (a != b) {
				if (a < b)
					best = r;
				break;
			}
		}
	for (int i = 0; i < k; i++)
		key[i] = (char)('0' + v[(best + i) % k]);
	key[k] = '\0';
	return k > 0 ? 0 : -1;
}

/* The set of (key, nodes, replicas) in *sets, added when new; NULL on OOM. */
static struct hb_meas_set *set_of(struct hb_meas_set **sets, int *n, const char *key, int nodes, int replicas)
{
	struct hb_meas_set *ns;

	/* Newest first: the readers' rows come grouped by placement, so the
	 * set a row belongs to is almost always the last one made. */
	for (int i = *n - 1; i >= 0; i--)
		if ((*sets)[i].nodes == nodes && (*sets)[i].replicas == replicas && strcmp((*sets)[i].key, key) == 0)
			return &(*sets)[i];
	ns = realloc(*sets, sizeof(**sets) * (size_t)(*n + 1));
	if (!ns)
		return NULL;
	*sets = ns;
	ns = &ns[(*n)++];
	memset(ns, 0, sizeof(*ns));
	hb_strlcpy(ns->key, key, sizeof(ns->key));
	ns->nodes = nodes;
	ns->replicas = replicas;
	return ns;
}

static int add_point(struct hb_meas_set *s, int local_bs, double step_s, double sync_s)
{
	struct hb_meas_point *np = realloc(s->pts, sizeof(*np) * (size_t)(s->npts + 1));

	if (!np)
		return -1;
	s->pts = np;
	np[s->npts].local_bs = local_bs;
	np[s->npts].step_s = step_s;
	np[s->npts].sync_s = sync_s;
	s->npts++;
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const struct hb_meas_point *x = a, *y = b;

	return (x->local_bs > y->local_bs) - (x->local_bs < y->local_bs);
}

/* Sort by local batch and average repeated measurements of one batch (two
 * rotations of one placement, e.g. "13" and "31"). */
static void finish_set(struct hb_meas_set *s)
{
	int w = 0;

	qsort(s->pts, (size_t)s->npts, sizeof(*s->pts), cmp_point);
	for (int r = 0; r < s->npts;) {
		int e = r;
		double step = 0, sync = 0;

		while (e < s->npts && s->pts[e].local_bs == s->pts[r].local_bs) {
			step += s->pts[e].step_s;
			sync += s->pts[e].sync_s;
			e++;
		}
		s->pts[w].local_bs = s->pts[r].local_bs;
		s->pts[w].step_s = step / (e - r);
		s->pts[w].sync_s = sync / (e - r);
		w++;
		r = e;
	}
	s->npts = w;
}

struct triple {
	int nodes, replicas, local_bs;
	double step, sync;
	int n;
};

static int cmp_triple(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;

	if (x->nodes != y->nodes)
		return x->nodes < y->nodes ? -1 : 1;
	if (x->replicas != y->replicas)
		return x->replicas < y->replicas ? -1 : 1;
	return (x->local_bs > y->local_bs) - (x->local_bs < y->local_bs);
}

/* The artifact's point set (applications.py get_throughput): placements
 * grouped by (num_nodes, num_replicas, local_bsz) and averaged, in
 * ascending key order (pandas groupby), then the scalability rows as read,
 * into m->nd_xyz, nd_val and nd_n. */
static int collect_nd(struct hb_perf_measured *m, const struct hb_placement_row *pr, int np,
		    const struct hb_scalability_row *sr, int ns, const char *gpu, struct hb_error *err)
{
	struct triple *tp = calloc((size_t)(np > 0 ? np : 1), sizeof(*tp));
	double *xyz = malloc(sizeof(double) * 3 * (size_t)(np + ns + 1));
	double *val = malloc(sizeof(double) * 2 * (size_t)(np + ns + 1));
	int nt = 0, w = 0, k = 0, rc = 0;

	if (!tp || !xyz || !val) {
		rc = hb_runtime_error(err, "measured profiles: out of memory");
		goto out;
	}
	for (int i = 0; i < np; i++) {
		int nodes = 0, replicas = 0;

		if (strcmp(pr[i].gpu, gpu) != 0 || !(pr[i].step_s > 0) || pr[i].local_bs < 1)
			continue;
		for (const char *c = pr[i].placement; *c; c++)
			if (*c >= '1' && *c <= '9') {
				nodes++;
				replicas += *c - '0';
			}
		tp[nt].nodes = nodes;
		tp[nt].replicas = replicas;
		tp[nt].local_bs = pr[i].local_bs;
		tp[nt].step = pr[i].step_s;
		tp[nt].sync = pr[i].sync_s;
		tp[nt].n = 1;
		nt++;
	}
	qsort(tp, (size_t)nt, sizeof(*tp), cmp_triple);
	for (int r = 0; r < nt; r++) {
		if (w > 0 && cmp_triple(&tp[w - 1], &tp[r]) == 0) {
			tp[w - 1].step += tp[r].step;
			tp[w - 1].sync += tp[r].sync;
			tp[w - 1].n++;
		} else {
			tp[w++] = tp[r];
		}
	}
	for (int i = 0; i < w; i++, k++) {
		xyz[3 * k] = tp[i].nodes;
		xyz[3 * k + 1] = tp[i].replicas;
		xyz[3 * k + 2] = tp[i].local_bs;
		val[2 * k] = tp[i].step / tp[i].n;
		val[2 * k + 1] = tp[i].sync / tp[i].n;
	}
	for (int i = 0; i < ns; i++) {
		if (strcmp(sr[i].gpu, gpu) != 0 || !(sr[i].step_s > 0) || sr[i].local_bs < 1)
			continue;
		xyz[3 * k] = sr[i].num_nodes;
		xyz[3 * k + 1] = sr[i].num_replicas;
		xyz[3 * k + 2] = sr[i].local_bs;
		val[2 * k] = sr[i].step_s;
		val[2 * k + 1] = sr[i].sync_s;
		k++;
	}
	m->nd_xyz = xyz;
	m->nd_val = val;
	m->nd_n = k;
	xyz = val = NULL;
out:
	free(tp);
	free(xyz);
	free(val);
	return rc;
}

int hb_perf_measured_load(struct hb_profdb *db, const char *model, const char *gpu, struct hb_perf_measured **out,
			  struct hb_error *err)
{
	struct hb_placement_row *pr = NULL;
	struct hb_scalability_row *sr = NULL;
	struct hb_perf_measured *m = NULL;
	int np = 0, ns = 0, rc = -1;

	*out = NULL;
	if (hb_profdb_get_placements(db, model, &pr, &np, err) < 0 ||
	    hb_profdb_get_scalability(db, model, &sr, &ns, err) < 0)
		goto out;
	m = calloc(1, sizeof(*m));
	if (!m) {
		hb_runtime_error(err, "measured profiles of %s: out of memory", model);
		goto out;
	}
	pthread_mutex_init(&m->nd_lock, NULL);
	atomic_init(&m->nd_tried, 0);
	for (int i = 0; i < np; i++) {
		int counts[24], n = 0, nodes, replicas;
		char key[24];
		struct hb_meas_set *s;

		if (strcmp(pr[i].gpu, gpu) != 0 || !(pr[i].step_s > 0) || pr[i].local_bs < 1)
			continue;
		for (const char *c = pr[i].placement; *c && n < 24; c++)
			if (*c >= '1' && *c <= '9')
				counts[n++] = *c - '0';
		if (placement_key(counts, n, key, sizeof(key), &nodes, &replicas) < 0)
			continue;
		if (!(s = set_of(&m->place, &m->nplace, key, nodes, replicas)) ||
		    add_point(s, pr[i].local_bs, pr[i].step_s, pr[i].sync_s) < 0) {
			hb_runtime_error(err, "measured profiles of %s: out of memory", model);
			goto out;
		}
		/* as the artifact reads the row: its own digits (they are its
		 * least rotations; another rotation would never be looked up) */
		for (int d = 0; d < n; d++)
			key[d] = (char)('0' + counts[d]);
		key[n] = '\0';
		if (!(s = set_of(&m->aplace, &m->naplace, key, nodes, replicas)) ||
		    add_point(s, pr[i].local_bs, pr[i].step_s, pr[i].sync_s) < 0) {
			hb_runtime_error(err, "measured profiles of %s: out of memory", model);
			goto out;
		}
	}
	for (int i = 0; i < ns; i++) {
		struct hb_meas_set *s;

		if (strcmp(sr[i].gpu, gpu) != 0 || !(sr[i].step_s > 0) || sr[i].local_bs < 1)
			continue;
		if (!(s = set_of(&m->scal, &m->nscal, "", sr[i].num_nodes, sr[i].num_replicas)) ||
		    add_point(s, sr[i].local_bs, sr[i].step_s, sr[i].sync_s) < 0) {
			hb_runtime_error(err, "measured profiles of %s: out of memory", model);
			goto out;
		}
	}
	for (int i = 0; i < m->nplace; i++)
		finish_set(&m->place[i]);
	for (int i = 0; i < m->naplace; i++)
		finish_set(&m->aplace[i]);
	for (int i = 0; i < m->nscal; i++)
		finish_set(&m->scal[i]);
	if (m->nplace + m->nscal > 0 && collect_nd(m, pr, np, sr, ns, gpu, err) < 0)
		goto out;
	if (m->nplace + m->nscal > 0) {
		*out = m;
		m = NULL;
	}
	rc = 0;
out:
	hb_perf_measured_free(m);
	free(pr);
	free(sr);
	return rc;
}

int hb_perf_measured_use_artifact(struct hb_perf_measured *m, struct hb_error *err)
{
	(void)err; /* nothing can fail before a lookup needs the triangulation */
	m->artifact = 1;
	return 0;
}

const struct hb_interp3 *hb_perf_measured_nd(const struct hb_perf_measured *cm)
{
	/* The cache fields only; the measurements stay as loaded. */
	struct hb_perf_measured *m = (struct hb_perf_measured *)cm;
	struct hb_error ignored;

	if (atomic_load_explicit(&m->nd_tried, memory_order_acquire))
		return m->nd;
	pthread_mutex_lock(&m->nd_lock);
	if (!atomic_load_explicit(&m->nd_tried, memory_order_relaxed) && m->nd_n >= 4 &&
	    (m->nd = calloc(1, sizeof(*m->nd))) &&
	    hb_interp3_build(m->nd, m->nd_xyz, m->nd_val, m->nd_n, &ignored) < 0) {
		free(m->nd); /* degenerate: no 3-D fallback, as the artifact would have none */
		m->nd = NULL;
	}
	atomic_store_explicit(&m->nd_tried, 1, memory_order_release);
	pthread_mutex_unlock(&m->nd_lock);
	return m->nd;
}

void hb_perf_measured_free(struct hb_perf_measured *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nplace; i++)
		free(m->place[i].pts);
	for (int i = 0; i < m->naplace; i++)
		free(m->aplace[i].pts);
	free(m->aplace);
	for (int i = 0; i < m->nscal; i++)
		free(m->scal[i].pts);
	free(m->place);
	free(m->scal);
	hb_interp3_free(m->nd);
	free(m->nd);
	free(m->nd_xyz);
	free(m->nd_val);
	pthread_mutex_destroy(&m->nd_lock);
	free(m);
}

/* Linear interpolation of the set at local_bs: 1 when inside its range. */
static int interp(const struct hb_meas_set *s, int local_bs, double *step, double *sync)
{
	for (int i = 0; i < s->npts; i++) {
		const struct hb_meas_point *a = &s->pts[i], *b;
		double w;

		if (a->local_bs == local_bs) {
			*step = a->step_s;
			*sync = a->sync_s;
			return 1;
		}
		if (i + 1 == s->npts || a->local_bs > local_bs)
			continue;
		b = &s->pts[i + 1];
		if (b->local_bs < local_bs)
			continue;
		w = (double)(local_bs - a->local_bs) / (double)(b->local_bs - a->local_bs);
		*step = a->step_s + w * (b->step_s - a->step_s);
		*sync = a->sync_s + w * (b->sync_s - a->sync_s);
		return 1;
	}
	return 0;
}

int hb_perf_measured_step(const struct hb_perf_measured *m, const int *counts, int n, int local_bs, int ga_steps,
			  double *iter_s)
{
	return hb_perf_measured_step_ordered(m, counts, n, HB_PLACE_DESCENDING, local_bs, ga_steps, iter_s);
}

/* The artifact's lookup: the placement at its least rotation of counts in
 * order, else the 3-D interpolation over (nodes capped at 16, replicas,
 * local_bs). */
/* The artifact's placement of counts (nonzero entries in `order`): its
 * nodes *k and GPUs *replicas, and its key (least rotation) into key[24];
 * 1 when there is a key, 0 when not (no GPU, more than 64 nodes, a node of
 * more than 9 GPUs: *k and *replicas still hold). */
static int artifact_key(const int *counts, int n, enum hb_place_order order, char *key, int *k, int *replicas)
{
	int v[64], knodes, kreplicas;

	*k = *replicas = 0;
	for (int i = 0; i < n; i++)
		if (counts[i] > 0) {
			if (*k < 64)
				v[*k] = counts[i];
			(*k)++;
			*replicas += counts[i];
		}
	if (*k == 0 || *k > 64)
		return 0;
	if (order == HB_PLACE_DESCENDING)
		qsort(v, (size_t)*k, sizeof(int), cmp_desc);
	return rotation_key(v, *k, key, 24, &knodes, &kreplicas) == 0;
}

static int artifact_step(const struct hb_perf_measured *m, const int *counts, int n, enum hb_place_order order,
			 int local_bs, double *step, double *sync)
{
	const struct hb_interp3 *nd;
	char key[24];
	int k, replicas;
	double q[3], val[HB_INTERP3_NVAL];

	if (artifact_key(counts, n, order, key, &k, &replicas))
		for (int i = 0; i < m->naplace; i++)
			if (strcmp(m->aplace[i].key, key) == 0 && interp(&m->aplace[i], local_bs, step, sync))
				return 1;
	q[0] = k < 16 ? k : 16;
	q[1] = replicas;
	q[2] = local_bs;
	if (!(nd = hb_perf_measured_nd(m)) || !hb_interp3_eval(nd, q, val))
		return 0;
	*step = val[0];
	*sync = val[1];
	return 1;
}

int hb_perf_measured_step_ordered(const struct hb_perf_measured *m, const int *counts, int n, enum hb_place_order order,
				  int local_bs, int ga_steps, double *iter_s)
{
	char key[24];
	int nodes = 0, replicas = 0, have_key;
	double step, sync;

	if (!m || ga_steps < 0)
		return 0;
	if (m->artifact) {
		if (!artifact_step(m, counts, n, order, local_bs, &step, &sync))
			return 0;
		goto found;
	}
	have_key = placement_key(counts, n, key, sizeof(key), &nodes, &replicas) == 0;
	if (!have_key) {
		/* A node with more than 9 GPUs: only (nodes, replicas) can match. */
		nodes = replicas = 0;
		for (int i = 0; i < n; i++)
			if (counts[i] > 0) {
				nodes++;
				replicas += counts[i];
			}
	}
	for (int i = 0; have_key && i < m->nplace; i++)
		if (strcmp(m->place[i].key, key) == 0 && interp(&m->place[i], local_bs, &step, &sync))
			goto found;
	for (int i = 0; i < m->nscal; i++)
		if (m->scal[i].nodes == nodes && m->scal[i].replicas == replicas &&
		    interp(&m->scal[i], local_bs, &step, &sync))
			goto found;
	return 0;
found:
	*iter_s = step + ga_steps * (step - sync);
	return 1;
}

int hb_perf_measured_max_local(const struct hb_perf_measured *m, const int *counts, int n, enum hb_place_order order)
{
	char key[24];
	int k, replicas, best = 0;

	if (!m)
		return 0;
	if (artifact_key(counts, n, order, key, &k, &replicas))
		for (int i = 0; i < m->naplace; i++)
			if (strcmp(m->aplace[i].key, key) == 0 && m->aplace[i].npts > 0)
				return m->aplace[i].pts[m->aplace[i].npts - 1].local_bs; /* ascending */
	for (int i = 0; k > 0 && i < m->nscal; i++)
		if (m->scal[i].nodes >= k && m->scal[i].replicas >= replicas && m->scal[i].npts > 0 &&
		    m->scal[i].pts[m->scal[i].npts - 1].local_bs > best)
			best = m->scal[i].pts[m->scal[i].npts - 1].local_bs;
	return best;
}

int hb_perf_measured_max_local_replicas(const struct hb_perf_measured *m, int replicas)
{
	int best = 0;

	for (int i = 0; m && i < m->naplace; i++)
		if (m->aplace[i].replicas == replicas && m->aplace[i].npts > 0 &&
		    m->aplace[i].pts[m->aplace[i].npts - 1].local_bs > best)
			best = m->aplace[i].pts[m->aplace[i].npts - 1].local_bs;
	return best;
}

double hb_perf_measured_one_gpu_rate(const struct hb_perf_measured *m)
{
	int lbs = 0;
	double step = 0.0;

	for (int i = 0; m && i < m->naplace; i++)
		if (m->aplace[i].replicas == 1)
			for (int k = 0; k < m->aplace[i].npts; k++) {
				if (m->aplace[i].pts[k].local_bs > lbs)
					lbs = m->aplace[i].pts[k].local_bs;
				if (m->aplace[i].pts[k].step_s > step)
					step = m->aplace[i].pts[k].step_s;
			}
	return lbs > 0 && step > 0 ? (double)lbs / step : 0.0;
}

void hb_perf_measured_local_range(const struct hb_perf_measured *m, int *lo, int *hi)
{
	*lo = *hi = 0;
	for (int i = 0; m && i < m->nplace; i++)
		for (int k = 0; k < m->place[i].npts; k++) {
			int b = m->place[i].pts[k].local_bs;

			if (*lo == 0 || b < *lo)
				*lo = b;
			if (b > *hi)
				*hi = b;
		}
}

int hb_perf_measured_nearest(const struct hb_perf_measured *m, const int *counts, int n, int local_bs, int ga_steps,
			     int *ref, int max, int *nref, double *iter_s)
{
	const struct hb_meas_set *best = NULL;
	double best_d = INFINITY, best_step = 0, best_sync = 0;
	int nodes = 0, replicas = 0;

	if (!m || ga_steps < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (counts[i] > 0) {
			nodes++;
			replicas += counts[i];
		}
	if (nodes == 0)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct hb_meas_set *sets = pass ? m->scal : m->place;
		int ns = pass ? m->nscal : m->nplace;

		for (int i = 0; i < ns; i++) {
			double step, sync, d;

			if (!interp(&sets[i], local_bs, &step, &sync))
				continue;
			d = fabs(log((double)nodes / sets[i].nodes)) + fabs(log((double)replicas / sets[i].replicas));
			if (d < best_d) {
				best_d = d;
				best = &sets[i];
				best_step = step;
				best_sync = sync;
			}
		}
	}
	if (!best || best->nodes > max)
		return 0;
	*nref = best->nodes;
	if (best->key[0]) {
		for (int i = 0; i < best->nodes; i++)
			ref[i] = best->key[i] - '0';
	} else {
		for (int i = 0; i < best->nodes; i++)
			ref[i] = best->replicas / best->nodes + (i < best->replicas % best->nodes);
	}
	*iter_s = best_step + ga_steps * (best_step - best_sync);
	return 1;
}
