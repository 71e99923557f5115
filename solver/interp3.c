/*
 * interp3.c: Delaunay linear interpolation in 3-D through Qhull
 * (interp3.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

#include "interp3.h"

void hb_interp3_free(struct hb_interp3 *t)
{
	if (!t)
		return;
	free(t->xyz);
	free(t->val);
	free(t->simp);
	free(t->tr);
	memset(t, 0, sizeof(*t));
}

/* Inverse of the 3x3 matrix m (row-major) into inv; 0 when singular. */
static int inverse3(const double m[9], double inv[9])
{
	double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
		     m[2] * (m[3] * m[7] - m[4] * m[6]);
	double scale = 0.0;

	for (int i = 0; i < 9; i++)
		scale = fmax(scale, fabs(m[i]));
	/* A flat tetrahedron (Qt may emit them) has no barycentric map. */
	if (!(fabs(det) > 1e3 * DBL_EPSILON * scale * scale * scale))
		return 0;
	inv[0] = (m[4] * m[8] - m[5] * m[7]) / det;
	inv[1] = (m[2] * m[7] - m[1] * m[8]) / det;
	inv[2] = (m[1] * m[5] - m[2] * m[4]) / det;
	inv[3] = (m[5] * m[6] - m[3] * m[8]) / det;
	inv[4] = (m[0] * m[8] - m[2] * m[6]) / det;
	inv[5] = (m[2] * m[3] - m[0] * m[5]) / det;
	inv[6] = (m[3] * m[7] - m[4] * m[6]) / det;
	inv[7] = (m[1] * m[6] - m[0] * m[7]) / det;
	inv[8] = (m[0] * m[4] - m[1] * m[3]) / det;
	return 1;
}

/* The barycentric map of tetrahedron k: c = T (q - v3), as scipy's
 * Delaunay.transform (columns of the matrix are v_j - v3). */
static int add_simplex(struct hb_interp3 *t, const int v[4])
{
	double m[9], *tr = &t->tr[12 * t->nsimp];
	const double *p3 = &t->xyz[3 * v[3]];

	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++)
			m[3 * r + c] = t->xyz[3 * v[c] + r] - p3[r];
	if (!inverse3(m, tr))
		return 0;
	tr[9] = p3[0];
	tr[10] = p3[1];
	tr[11] = p3[2];
	memcpy(&t->simp[4 * t->nsimp], v, 4 * sizeof(int));
	t->nsimp++;
	return 1;
}

int hb_interp3_build(struct hb_interp3 *t, const double *xyz, const double *val, int npts, struct hb_error *err)
{
	char options[] = "qhull d Qbb Qc Qz Q12 Qt";
	qhT qh_qh, *qh = &qh_qh;
	coordT *pts;
	facetT *facet;
	int code, cap, curlong, totlong;
	FILE *errfile;

	memset(t, 0, sizeof(*t));
	if (npts < 4)
		return hb_input_error(err, "interpolation needs at least 4 points in 3-D, got %d", npts);
	t->npts = npts;
	t->xyz = malloc(sizeof(double) * 3 * (size_t)npts);
	t->val = malloc(sizeof(double) * HB_INTERP3_NVAL * (size_t)npts);
	pts = malloc(sizeof(coordT) * 3 * (size_t)npts);
	if (!t->xyz || !t->val || !pts) {
		free(pts);
		hb_interp3_free(t);
		return hb_runtime_error(err, "interpolation: out of memory for %d points", npts);
	}
	memcpy(t->xyz, xyz, sizeof(double) * 3 * (size_t)npts);
	memcpy(t->val, val, sizeof(double) * HB_INTERP3_NVAL * (size_t)npts);
	for (int i = 0; i < 3 * npts; i++)
		pts[i] = xyz[i];
	/* Qhull reports precision trouble on errfile: keep it off the user's
	 * terminal; the exit code says whether it succeeded. */
	errfile = fopen("/dev/null", "w");
	qh_zero(qh, errfile);
	code = qh_new_qhull(qh, 3, npts, pts, False, options, NULL, errfile);
	if (code != 0) {
		qh_freeqhull(qh, !qh_ALL);
		qh_memfreeshort(qh, &curlong, &totlong);
		if (errfile)
			fclose(errfile);
		free(pts);
		hb_interp3_free(t);
		return hb_input_error(err, "interpolation: Qhull found the %d points degenerate (code %d)", npts, code);
	}
	cap = qh->num_facets > 0 ? qh->num_facets : 1;
	t->simp = malloc(sizeof(int) * 4 * (size_t)cap);
	t->tr = malloc(sizeof(double) * 12 * (size_t)cap);
	if (t->simp && t->tr) {
		FORALLfacets {
			vertexT *vertex, **vertexp;
			int v[4], k = 0;

			/* The lower hull of the lifted points is the tetrahedralisation. */
			if (facet->upperdelaunay || t->nsimp >= cap)
				continue;
			FOREACHvertex_(facet->vertices) {
				if (k < 4)
					v[k] = qh_pointid(qh, vertex->point);
				k++;
			}
			if (k == 4 && v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[3] >= 0 && v[0] < npts && v[1] < npts &&
			    v[2] < npts && v[3] < npts)
				add_simplex(t, v);
		}
	}
	qh_freeqhull(qh, !qh_ALL);
	qh_memfreeshort(qh, &curlong, &totlong);
	if (errfile)
		fclose(errfile);
	free(pts);
	if (!t->simp || !t->tr) {
		hb_interp3_free(t);
		return hb_runtime_error(err, "interpolation: out of memory for the tetrahedra");
	}
	if (t->nsimp == 0) {
		hb_interp3_free(t);
		return hb_input_error(err, "interpolation: the %d points span no volume", npts);
	}
	return 0;
}

int hb_interp3_eval(const struct hb_interp3 *t, const double q[3], double *out)
{
	/* scipy's find_simplex accepts barycentric coordinates down to
	 * -100 DBL_EPSILON; the first such tetrahedron is used (on a shared
	 * face every candidate gives the same value). */
	const double eps = 100 * DBL_EPSILON;

	for (int k = 0; k < t->nsimp; k++) {
		const double *tr = &t->tr[12 * k];
		double d[3] = { q[0] - tr[9], q[1] - tr[10], q[2] - tr[11] }, c[4];

		c[0] = tr[0] * d[0] + tr[1] * d[1] + tr[2] * d[2];
		c[1] = tr[3] * d[0] + tr[4] * d[1] + tr[5] * d[2];
		c[2] = tr[6] * d[0] + tr[7] * d[1] + tr[8] * d[2];
		c[3] = 1.0 - c[0] - c[1] - c[2];
		if (c[0] < -eps || c[1] < -eps || c[2] < -eps || c[3] < -eps || c[0] > 1 + eps || c[1] > 1 + eps ||
		    c[2] > 1 + eps || c[3] > 1 + eps)
			continue;
		for (int j = 0; j < HB_INTERP3_NVAL; j++) {
			out[j] = 0.0;
			for (int v = 0; v < 4; v++)
				out[j] += c[v] * t->val[HB_INTERP3_NVAL * t->simp[4 * k + v] + j];
		}
		return 1;
	}
	return 0;
}
