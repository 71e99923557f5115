/*
 * gavel_policy.h: the options of hetbatch's Gavel arbiters
 * (sim/policies/gavel/arbiter_gavel.c) in one struct with its defaults in
 * one place, so that they can become a policy's knob table without
 * touching the arbiter.
 */
#ifndef HB_POLICY_GAVEL_H
#define HB_POLICY_GAVEL_H

struct hb_gavel_opts {
	double round_s;          /* round length (time_per_iteration, 360 s: gavel scheduler.py, EXPERIMENTS.md) */
	double time_limit_s;     /* per-LP solver limit; past it the previous allocation is kept */
};

/* The defaults above. */
void hb_gavel_opts_default(struct hb_gavel_opts *o);

#endif
