/*
 * elastic_opts.h: the options of the IBM elastic autoscaler (its arbiter,
 * arbiter_elastic.c, under the policies elastic and elastic-fixed*), and
 * their knob table (policy_knob.h), which `sim`, sweeps and results read.
 */
#ifndef HB_ELASTIC_OPTS_H
#define HB_ELASTIC_OPTS_H

#include "sim.h"

struct hb_elastic_opts {
	double interval_s; /* Delta between scaling decisions, s (default 600: V-B's "10-15 minutes");
			      <= 0: decide at every arrival and departure */
	int drop;          /* 1: reject jobs the optimizer cannot admit (drop mode); 0 (default): queue them */
};

/* The run's options: sim->policy_opts, or the defaults when it has none. */
const struct hb_elastic_opts *hb_elastic_opts(const struct hb_sim *sim);

#endif
