/*
 * est_plan.c: EasyScale's EST plans (est_plan.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "est_plan.h"

static int type_ok(const struct hb_est_type *t)
{
	return t->est_s > 0 && isfinite(t->est_s) && t->d2 >= 1.0 && isfinite(t->d2) && t->switch_s >= 0 &&
	       isfinite(t->switch_s) && t->fixed_s >= 0 && isfinite(t->fixed_s) && t->avail >= 0;
}

/* Effective EST time of a type in a plan that mixes types or not. */
static double eff_est(const struct hb_est_type *t, int mixed)
{
	return mixed ? t->est_s * t->d2 : t->est_s;
}

/* Step time of a GPU of type t carrying a ESTs: the one expression both
 * the candidates and the fit test use, so they compare bit for bit. */
double hb_est_gpu_step(const struct hb_est_type *t, int mixed, int a)
{
	return (double)a * eff_est(t, mixed) + (double)(a - 1) * t->switch_s + t->fixed_s;
}

/* Most ESTs (<= maxp) a GPU of type t runs within f; 0 when not one. */
static int fit(const struct hb_est_type *t, int mixed, int maxp, double f)
{
	int lo = 0, hi = maxp;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (hb_est_gpu_step(t, mixed, mid) <= f)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double hb_est_eq1(const struct hb_est_type *t, int ntypes, const int *n, const int *a, int maxp, double *waste,
		  double *capacity)
{
	double f = 0.0, cap = 0.0, w = 0.0;
	int used = 0, nest = 0, mixed;

	for (int i = 0; i < ntypes; i++)
		used += n[i] > 0;
	mixed = used > 1;
	/* (1b) f_overload = max A_i / C_i over the types in use. */
	for (int i = 0; i < ntypes; i++)
		if (n[i] > 0 && a[i] * eff_est(&t[i], mixed) > f)
			f = a[i] * eff_est(&t[i], mixed);
	if (!(f > 0)) {
		if (waste)
			*waste = 0.0;
		if (capacity)
			*capacity = 0.0;
		return 0.0;
	}
	/* (1c) with N_i: every GPU of a type wastes C_i - A_i / f. */
	for (int i = 0; i < ntypes; i++) {
		double c;

		if (n[i] <= 0)
			continue;
		c = 1.0 / eff_est(&t[i], mixed);
		cap += n[i] * c;
		w += n[i] * (c - a[i] / f);
		nest += n[i] * a[i];
	}
	w += (nest - maxp) / f;
	if (waste)
		*waste = w;
	if (capacity)
		*capacity = cap;
	return cap - w; /* (1d) */
}

int hb_est_split(const struct hb_est_type *t, int ntypes, const int *n, int maxp, struct hb_est_plan *out)
{
	double *cand;
	int used = 0, mixed, ncand = 0, lo, hi;

	if (ntypes < 1 || ntypes > HB_EST_MAX_TYPES || maxp < 1 || maxp > HB_EST_MAX_P)
		return -1;
	for (int i = 0; i < ntypes; i++) {
		if (n[i] < 0 || (n[i] > 0 && !type_ok(&t[i])))
			return -1;
		used += n[i] > 0;
	}
	if (used == 0)
		return 0;
	mixed = used > 1;
	cand = malloc(sizeof(double) * (size_t)used * (size_t)maxp);
	if (!cand)
		return -1;
	for (int i = 0; i < ntypes; i++)
		for (int a = 1; n[i] > 0 && a <= maxp; a++)
			cand[ncand++] = hb_est_gpu_step(&t[i], mixed, a);
	qsort(cand, (size_t)ncand, sizeof(double), cmp_double);
	/* Feasibility is monotone in f: binary search the first feasible
	 * candidate.  The largest (maxp ESTs on every used GPU) always is. */
	lo = 0;
	hi = ncand - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2, ok = 1;
		long slots = 0;

		for (int i = 0; i < ntypes && ok; i++) {
			int a;

			if (n[i] == 0)
				continue;
			a = fit(&t[i], mixed, maxp, cand[mid]);
			ok = a >= 1;
			slots += (long)n[i] * a;
		}
		if (ok && slots >= maxp)
			hi = mid;
		else
			lo = mid + 1;
	}
	memset(out, 0, sizeof(*out));
	out->ntypes = ntypes;
	out->maxp = maxp;
	out->mixed = mixed;
	for (int i = 0; i < ntypes; i++) {
		if (n[i] == 0)
			continue;
		out->n[i] = n[i];
		out->a[i] = fit(&t[i], mixed, maxp, cand[lo]);
		out->ngpus += n[i];
		out->nest += n[i] * out->a[i];
		if (hb_est_gpu_step(&t[i], mixed, out->a[i]) > out->step_s)
			out->step_s = hb_est_gpu_step(&t[i], mixed, out->a[i]);
	}
	free(cand);
	out->thp = maxp / out->step_s;
	{
		double waste;

		out->eq1_thp = hb_est_eq1(t, ntypes, out->n, out->a, maxp, &waste, &out->capacity);
		out->waste_frac = out->capacity > 0 ? waste / out->capacity : 0.0;
	}
	return 1;
}

/* 1 when plan p is better than q (see hb_est_best). */
static int better(const struct hb_est_plan *p, const struct hb_est_plan *q)
{
	if (p->thp != q->thp)
		return p->thp > q->thp;
	if (p->ngpus != q->ngpus)
		return p->ngpus < q->ngpus;
	for (int i = 0; i < p->ntypes; i++)
		if (p->n[i] != q->n[i])
			return p->n[i] < q->n[i];
	return 0;
}

int hb_est_best(const struct hb_est_type *t, int ntypes, int maxp, unsigned allowed, hb_est_adjust_fn *adjust,
		void *ctx, struct hb_est_plan *out)
{
	struct hb_est_type tt[HB_EST_MAX_TYPES];
	struct hb_est_plan cur;
	int n[HB_EST_MAX_TYPES] = { 0 }, lim[HB_EST_MAX_TYPES], found = 0;

	if (ntypes < 1 || ntypes > HB_EST_MAX_TYPES || maxp < 1 || maxp > HB_EST_MAX_P)
		return -1;
	for (int i = 0; i < ntypes; i++) {
		if (!type_ok(&t[i]))
			return -1;
		lim[i] = (allowed == 0 || (allowed >> i) & 1u) ? (t[i].avail < maxp ? t[i].avail : maxp) : 0;
	}
	/* Every count vector n <= lim with 1 <= sum n <= maxp, as an odometer. */
	for (;;) {
		int k = 0, sum = 0;

		while (k < ntypes) {
			if (n[k] < lim[k]) {
				n[k]++;
				break;
			}
			n[k] = 0;
			k++;
		}
		if (k == ntypes)
			break; /* wrapped around: every vector seen */
		for (int i = 0; i < ntypes; i++)
			sum += n[i];
		if (sum > maxp)
			continue;
		memcpy(tt, t, sizeof(*t) * (size_t)ntypes);
		if (adjust && adjust(ctx, n, tt, ntypes) < 0)
			continue;
		if (hb_est_split(tt, ntypes, n, maxp, &cur) != 1)
			return -1;
		if (!found || better(&cur, out)) {
			*out = cur;
			found = 1;
		}
	}
	return found;
}
