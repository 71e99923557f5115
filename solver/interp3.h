/*
 * interp3.h: piecewise-linear interpolation over scattered 3-D points on
 * their Delaunay tetrahedralisation, as scipy's LinearNDInterpolator does
 * (Qhull "d Qbb Qc Qz Q12 Qt": scipy's Delaunay options for 3-D).  Pollux's
 * simulator interpolates step times this way over (nodes, replicas, local
 * batch) where no placement was measured (applications.py get_throughput),
 * so Pollux fidelity needs the same triangulation: on the near-lattice
 * points of the artifact's traces the Delaunay cells are not unique, and
 * another choice moves an interpolated step time by up to 6 %.  Qhull is
 * therefore used itself, fed the points in the artifact's order (the order
 * decides the cells where they are ambiguous).
 */
#ifndef HB_INTERP3_H
#define HB_INTERP3_H

#include "error.h"

#define HB_INTERP3_NVAL 2   /* values carried per point (step, sync) */

struct hb_interp3 {
	int npts;
	double *xyz;            /* 3 per point, owned */
	double *val;            /* HB_INTERP3_NVAL per point, owned */
	int nsimp;
	int *simp;              /* 4 point indices per non-degenerate tetrahedron, owned */
	double *tr;             /* 12 per tetrahedron: inverse of (v0-v3 | v1-v3 | v2-v3), then v3 */
};

/* Triangulate npts points (xyz: 3 per point, val: HB_INTERP3_NVAL per
 * point, both copied).  Fails on fewer than 4 points or when Qhull finds
 * them degenerate (all on a plane). */
int hb_interp3_build(struct hb_interp3 *t, const double *xyz, const double *val, int npts, struct hb_error *err);
void hb_interp3_free(struct hb_interp3 *t);

/* The interpolated values at q: 1 and out[0..HB_INTERP3_NVAL) set, or 0
 * when q lies outside the convex hull of the points. */
int hb_interp3_eval(const struct hb_interp3 *t, const double q[3], double *out);

#endif
