/*
 * easyscale_opts.h: the options of EasyScale's agent (agent_easyscale.c,
 * under the policies easyscale and easyscale-homo), and their knob table
 * (policy_knob.h), which `sim`, sweeps and results read.
 */
#ifndef HB_EASYSCALE_OPTS_H
#define HB_EASYSCALE_OPTS_H

#include "sim.h"

struct hb_easyscale_opts {
	int comm;             /* 1 (default): plans estimate the all-reduce; 0: Eq. 1's compute only, as the
				 paper */
	int artifact_restart; /* 1: the artifact's cost, 20 s at the first start and nothing after; 0
				 (default): the simulator's restart model */
};

/* The run's options: sim->policy_opts, or the defaults when it has none. */
const struct hb_easyscale_opts *hb_easyscale_opts(const struct hb_sim *sim);

#endif
