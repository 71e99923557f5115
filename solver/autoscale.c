/*
 * autoscale.c: JABAS's epoch-time estimate (autoscale.h), walking the
 * trajectory through the IIDP solver's answers by allocation shape.
 */
#include <math.h>
#include <string.h>

#include "autoscale.h"

int hb_jabas_epoch_time(struct hb_iidp_solver *s, const int *alloc, const long *traj, int ntraj, long p,
			long done_in_block, double dataset, struct hb_epoch_estimate *out, struct hb_error *err)
{
	struct hb_iidp_shape sh = { 0 };
	int rc = hb_iidp_shape_of(s, alloc, &sh, err);

	if (rc == 0)
		rc = hb_jabas_epoch_time_shape(s, &sh, traj, ntraj, p, done_in_block, dataset, out, err);
	hb_iidp_shape_free(&sh);
	return rc;
}

int hb_jabas_epoch_time_shape(struct hb_iidp_solver *s, const struct hb_iidp_shape *shape, const long *traj,
			      int ntraj, long p, long done_in_block, double dataset, struct hb_epoch_estimate *out,
			      struct hb_error *err)
{
	double rem = dataset;
	struct hb_iidp_summary r = { 0 };
	long last_bs = 0; /* the point r answers: trajectories repeat values */

	memset(out, 0, sizeof(*out));
	out->feasible = 1;
	if (ntraj < 1 || p < 1 || dataset <= 0 || done_in_block < 0 || done_in_block >= p)
		return hb_input_error(err, "auto-scaler: bad trajectory (points %d, p %ld, done %ld, dataset %g)",
				      ntraj, p, done_in_block, dataset);
	for (int k = 0; k < ntraj && rem > 0; k++) {
		struct hb_iidp_request req = { .global_bs = traj[k], .m_rule = HB_IIDP_M_ROUND };
		long steps = k == 0 ? p - done_in_block : p;
		double bg;

		if (traj[k] <= 0)
			return hb_input_error(err, "auto-scaler: trajectory point %d: global batch %ld <= 0", k,
					      traj[k]);
		if (k == ntraj - 1)
			steps = (long)floor(rem / (double)traj[k]) + 1;
		/* The answer is a function of the point: a repeated point (a flat
		 * forecast) reuses it. */
		if (k == 0 || traj[k] != last_bs) {
			if (hb_iidp_solve_summary(s, shape, &req, &r, err) < 0)
				return -1;
			last_bs = traj[k];
		}
		if (!r.found) {
			out->feasible = 0;
			out->epoch_s = INFINITY;
			return 0;
		}
		bg = (double)r.global_bs;
		if (rem - bg * (double)steps < 0)
			steps = (long)floor(rem / bg) + 1;
		if (k == 0) {
			out->first_local_bs = r.local_bs;
			out->first_global_bs = r.global_bs;
			out->first_iter_s = r.iter_s;
		}
		out->epoch_s += r.iter_s * (double)steps;
		out->iterations += steps;
		rem -= bg * (double)steps;
	}
	return 0;
}
