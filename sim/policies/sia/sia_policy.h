/*
 * sia_policy.h: the options of hetbatch's Sia (sim/policies/sia/arbiter_sia.c)
 * in one struct with its defaults in one place, so that they can become a
 * policy's knob table without touching the arbiter.
 */
#ifndef HB_POLICY_SIA_H
#define HB_POLICY_SIA_H

struct hb_sia_opts {
	double round_s;          /* seconds between rounds (artifact --interval 60, §4.3) */
	double p;                /* fairness power (sia_default_p_val -0.5, §4.3, §5.7) */
	double lambda_n;         /* penalty of a job left without GPUs (mip_lambda_n 1.1, §4.3) */
	double clip;             /* cap on G^p (sia_goodput_clip_val 3000) */
	double restart_penalty_s; /* S_i of Eq. 2; < 0: the simulator's restart cost of the job
				     (hb_sim_restart_s), the seconds a restart really loses here */
	double time_limit_s;     /* per-round solver limit; the best incumbent is used past it
				    (note A10: "configurable, e.g. 10 s") */
	double mip_gap;          /* relative gap (artifact CBC allowablePercentageGap 0.01 % = 1e-4) */
};

/* The defaults above. */
void hb_sia_opts_default(struct hb_sia_opts *o);

#endif
