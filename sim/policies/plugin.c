/*
 * plugin.c: loading policy plugins (plugin.h) into the registry.
 *
 * Checks come before anything of the plugin runs: the descriptor's
 * version, then every policy's name (the characters --policy and file
 * names accept, not taken by a built-in, another plugin or an earlier
 * policy of the same file), its agent (a built-in policy's) and its
 * arbiter's required callback.  Only then is the API pointer stored and
 * the policies registered, all of them or none.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "hetbatch/policy.h"
#include "plugin.h"
#include "policy.h"
#include "strutil.h"

#define HB_PLUGIN_SYMBOL "hetbatch_plugin"

struct plugin {
	char *path;        /* as given (a file, or the embedding caller's origin) */
	void *handle;      /* dlopen's; NULL for a descriptor the caller made in memory */
	const struct hb_plugin *desc;
	struct hb_policy *reg;  /* its registry entries (the registry frees them) */
};

/* The process's plugins, in load order (plugin.h: loaded at a command's
 * start, before any run). */
static struct plugin *plugins;
static int nplugins;

int hb_plugin_count(void)
{
	return nplugins;
}

const char *hb_plugin_path(int i)
{
	return i >= 0 && i < nplugins ? plugins[i].path : NULL;
}

static int valid_name(const char *s)
{
	if (!s || !*s || strlen(s) >= 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

/* A plugin policy's options: a table with its defaults, and option names
 * that no built-in knob, other plugin knob or sim option already takes
 * (hb_policy_knob_find covers the registry; sim's own options are the
 * CLI's to refuse, which it does when it builds its option table). */
static int check_options(const char *path, const struct hb_plugin_policy *q, struct hb_error *err)
{
	const struct hb_pknob_table *t = q->options;

	if (!t->knobs || !t->defaults || t->size == 0)
		return hb_input_error(err, "%s: policy '%s': its options need knobs, defaults and a size", path,
				      q->name);
	for (const struct hb_pknob *k = t->knobs; k->name; k++) {
		const struct hb_pknob_table *owner = NULL;

		if (!valid_name(k->name) || !k->key || !k->help)
			return hb_input_error(err, "%s: policy '%s': knob '%s' needs a lower-case name, a key and help",
					      path, q->name, k->name);
		if (k->type < HB_PKNOB_FLAG || k->type > HB_PKNOB_INT || (k->type == HB_PKNOB_WORDS && !k->words) ||
		    k->offset + (k->type == HB_PKNOB_DOUBLE ? sizeof(double) : sizeof(int)) > t->size)
			return hb_input_error(err, "%s: policy '%s': knob '%s': bad type or offset", path, q->name,
					      k->name);
		if (hb_policy_knob_find(k->name, &owner) && owner != t)
			return hb_input_error(err, "%s: policy '%s': option --%s is already another policy's", path,
					      q->name, k->name);
	}
	return 0;
}

/* Every policy of pl, checked against the registry and each other. */
static int check(const char *path, const struct hb_plugin *pl, int *count, struct hb_error *err)
{
	int n = 0;

	if (!pl->policies || !pl->policies[0].name)
		return hb_input_error(err, "%s: plugin '%s' defines no policy", path, pl->name ? pl->name : "?");
	for (const struct hb_plugin_policy *q = pl->policies; q->name; q++, n++) {
		const struct hb_policy *same = hb_policy_find(q->name), *agent;

		if (!valid_name(q->name))
			return hb_input_error(err, "%s: policy name '%s': use lower-case letters, digits, '-' and '_' "
					      "(at most 63)", path, q->name);
		if (same)
			return hb_input_error(err, "%s: policy '%s' is already defined (%s%s)", path, q->name,
					      same->origin ? "by plugin " : "built-in",
					      same->origin ? same->origin : "");
		for (const struct hb_plugin_policy *r = pl->policies; r < q; r++)
			if (hb_strcaseeq(r->name, q->name))
				return hb_input_error(err, "%s: policy '%s' is defined twice", path, q->name);
		if (!q->arbiter || !q->arbiter->on_arrival)
			return hb_input_error(err, "%s: policy '%s': its arbiter has no on_arrival callback", path,
					      q->name);
		if (!q->agent_of || !(agent = hb_policy_find(q->agent_of)) || agent->origin)
			return hb_input_error(err, "%s: policy '%s': agent_of '%s' is not a built-in policy (fifo "
					      "keeps each job's GPUs and batch, pollux tunes the batch)",
					      path, q->name, q->agent_of ? q->agent_of : "(none)");
		if (q->options && check_options(path, q, err) < 0)
			return -1;
	}
	*count = n;
	return 0;
}

/* The registry entry of a plugin policy. */
static void fill(struct hb_policy *p, const struct hb_plugin_policy *q, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->name = q->name;
	p->agent = hb_policy_find(q->agent_of)->agent;
	p->shared = q->arbiter;
	p->summary = q->summary ? q->summary : "";
	p->options = q->options;
	p->origin = path;
}

/* Check pl (version, API slot, policies) and register its policies under
 * origin; handle (dlopen's, or NULL) is closed by unload_all. */
static int add(const struct hb_plugin *pl, const char *origin, void *handle, struct hb_error *err)
{
	struct hb_policy *reg = NULL;
	struct plugin *grown;
	char *kept = NULL;
	int n = 0;

	if (pl->api_version != HB_POLICY_API_VERSION)
		return hb_input_error(err, "%s: built against policy API version %d, this hetbatch has version %d: "
				      "rebuild it against this hetbatch's hetbatch/policy.h", origin, pl->api_version,
				      HB_POLICY_API_VERSION);
	if (!pl->api)
		return hb_input_error(err, "%s: its descriptor has no API slot (declare it with HB_PLUGIN_EXPORT)",
				      origin);
	if (check(origin, pl, &n, err) < 0)
		return -1;
	grown = realloc(plugins, (size_t)(nplugins + 1) * sizeof(*plugins));
	if (grown)
		plugins = grown;
	if (!grown || !(kept = strdup(origin)) || !(reg = calloc((size_t)n, sizeof(*reg)))) {
		free(kept);
		return hb_runtime_error(err, "%s: out of memory", origin);
	}
	for (int i = 0; i < n; i++)
		fill(&reg[i], &pl->policies[i], kept);
	if (hb_policy_register(reg, n, err) < 0) {
		free(reg);
		free(kept);
		return -1;
	}
	*pl->api = &hb_plugin_host_api;
	plugins[nplugins] = (struct plugin){ kept, handle, pl, reg };
	nplugins++;
	return 0;
}

int hb_plugin_load(const char *path, struct hb_error *err)
{
	const struct hb_plugin *pl;
	char *open_as;
	void *h;

	if (!path || !*path)
		return hb_input_error(err, "--policy-plugin: empty file name");
	/* dlopen searches the library path for a bare name: a user means this directory. */
	if (!(open_as = malloc(strlen(path) + 3)))
		return hb_runtime_error(err, "%s: out of memory", path);
	strcpy(open_as, strchr(path, '/') ? "" : "./");
	strcat(open_as, path);
	h = dlopen(open_as, RTLD_NOW | RTLD_LOCAL);
	free(open_as);
	if (!h) {
		const char *why = dlerror();

		return hb_input_error(err, "%s: cannot load it as a policy plugin: %s", path, why ? why : "dlopen failed");
	}
	for (int i = 0; i < nplugins; i++)
		if (plugins[i].handle == h) { /* the same file again */
			dlclose(h);
			return 0;
		}
	dlerror();
	pl = dlsym(h, HB_PLUGIN_SYMBOL);
	if (!pl) {
		dlclose(h);
		return hb_input_error(err, "%s: no symbol '%s': not a hetbatch policy plugin (see "
				      "examples/policy-plugin/)", path, HB_PLUGIN_SYMBOL);
	}
	if (add(pl, path, h, err) < 0) {
		dlclose(h);
		return -1;
	}
	return 0;
}

int hb_plugin_add(const struct hb_plugin *pl, const char *origin, struct hb_error *err)
{
	if (!pl || !origin || !*origin)
		return hb_input_error(err, "policy registration: no descriptor or no origin");
	for (int i = 0; i < nplugins; i++)
		if (plugins[i].desc == pl)
			return 0; /* the same descriptor again */
	return add(pl, origin, NULL, err);
}

int hb_plugin_remove(const struct hb_plugin *pl)
{
	for (int i = 0; i < nplugins; i++) {
		if (plugins[i].desc != pl || plugins[i].handle)
			continue;
		hb_policy_unregister(plugins[i].reg);
		free(plugins[i].path);
		memmove(&plugins[i], &plugins[i + 1], (size_t)(nplugins - i - 1) * sizeof(*plugins));
		nplugins--;
		return 0;
	}
	return -1;
}

void hb_plugin_unload_all(void)
{
	hb_policy_unregister_plugins();
	for (int i = nplugins - 1; i >= 0; i--) {
		if (plugins[i].handle)
			dlclose(plugins[i].handle);
		free(plugins[i].path);
	}
	free(plugins);
	plugins = NULL;
	nplugins = 0;
}
