/*
 * bad_plugins.c: plugins hetbatch must refuse, one per build (BAD_*
 * chosen by meson), each with the error test_plugin.py expects: another
 * API version, no descriptor, a name a built-in has, an agent that is not
 * a built-in policy's, and an arbiter without on_arrival.
 */
#include <hetbatch/policy.h>

HB_PLUGIN_API;

__attribute__((unused)) static int arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)sim, (void)state, (void)job, (void)err;
	return 0;
}

static const struct hb_arbiter_ops arb __attribute__((unused)) = { .name = "bad", .on_arrival = arrival };
static const struct hb_arbiter_ops no_arrival __attribute__((unused)) = { .name = "bad" };

#if defined(BAD_VERSION)
static const struct hb_plugin_policy policies[] = { { .name = "v-next", .agent_of = "fifo", .arbiter = &arb }, { 0 } };
__attribute__((visibility("default"))) const struct hb_plugin hetbatch_plugin = {
	HB_POLICY_API_VERSION + 1, "v-next", policies, &hb
};
#elif defined(BAD_NO_SYMBOL)
__attribute__((visibility("default"))) int not_a_hetbatch_plugin = 1;
#elif defined(BAD_DUP_NAME)
static const struct hb_plugin_policy policies[] = { { .name = "tiresias", .agent_of = "fifo", .arbiter = &arb }, { 0 } };
HB_PLUGIN_EXPORT("dup", policies);
#elif defined(BAD_AGENT)
static const struct hb_plugin_policy policies[] = { { .name = "odd-agent", .agent_of = "nonesuch", .arbiter = &arb }, { 0 } };
HB_PLUGIN_EXPORT("odd-agent", policies);
#elif defined(BAD_NO_ARRIVAL)
static const struct hb_plugin_policy policies[] = { { .name = "no-arrival", .agent_of = "fifo", .arbiter = &no_arrival }, { 0 } };
HB_PLUGIN_EXPORT("no-arrival", policies);
#else
#error "define one BAD_*"
#endif
