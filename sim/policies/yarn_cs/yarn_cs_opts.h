/*
 * yarn_cs_opts.h: the options of the YARN-CS arbiter (arbiter_yarn_cs.c),
 * and their knob table (policy_knob.h), which `sim`, sweeps and results
 * read.
 */
#ifndef HB_YARN_CS_OPTS_H
#define HB_YARN_CS_OPTS_H

#include "sim.h"

struct hb_yarn_cs_opts {
	int head_only; /* 1: YARN-CS as the EasyScale artifact simulates it, one job at a time; 0 (default):
			  FIFO gang scheduling that starts every queued job that fits */
};

/* The run's options: sim->policy_opts, or the defaults when it has none. */
const struct hb_yarn_cs_opts *hb_yarn_cs_opts(const struct hb_sim *sim);

#endif
