/*
 * catalog.c: `hetbatch catalog gpus|models|clusters [NAME|FILE] [--json]`.
 *
 * Lists the built-in catalog as tables, shows one entry in detail with the
 * sources of its numbers, or prints JSON in the form the loader reads back,
 * so `hetbatch catalog clusters jabas-a --json > mine.json` is a starting
 * point for a user's own file.  `--from-philly FILE` turns the Philly
 * trace's cluster_machine_list into such a file (traces/philly.h),
 * `--from-alibaba FILE` Alibaba's 2023 GPU trace node list
 * (traces/alibaba.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "alibaba.h"
#include "catalog.h"
#include "cli.h"
#include "json.h"
#include "philly.h"
#include "strutil.h"

#define MIB 1048576.0
#define GIB (1024.0 * MIB)

enum kind { K_GPU, K_MODEL, K_CLUSTER };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch catalog gpus|models|clusters [NAME|FILE] [--json]\n"
		"       hetbatch catalog clusters --from-philly MACHINE_LIST [--name N] [--out FILE] [--json]\n"
		"       hetbatch catalog clusters --from-alibaba NODE_LIST [--gpu-alias CODE=GPU,...] [--name N]\n"
		"                [--out FILE] [--json]\n"
		"\n"
		"List the built-in GPU types, DNN models and cluster presets, or show one\n"
		"entry in detail with the sources of its numbers.  NAME is a catalog name\n"
		"(GPU aliases such as \"Tesla V100-PCIE-16GB\" work too, in any case); FILE is\n"
		"a JSON file holding your own entry (one object, or a document with a\n"
		"one-element \"gpus\"/\"models\"/\"clusters\" array), validated and shown the\n"
		"same way.  A cluster file may use built-in GPU types by name.\n"
		"\n"
		"Options:\n"
		"  --json      print JSON in the form the loader reads (a listing is\n"
		"              {\"gpus\": [...]}, one entry a single object); stable key order\n"
		"  -h, --help  this help\n"
		"\n"
		"Philly machine list (clusters only):\n"
		"  --from-philly F  build a cluster from Philly's cluster_machine_list CSV\n"
		"                   (machineId,number of GPUs,single GPU mem): one node per\n"
		"                   machine named by its id, 24 GB = p40, 12 GB = p100,\n"
		"                   links and restart costs of the \"philly\" preset;\n"
		"                   machines with 0 GPUs are left out and counted\n"
		"  --name N         the cluster's name (default philly-machines, or\n"
		"                   alibaba-openb with --from-alibaba)\n"
		"  --out FILE       write the cluster JSON to FILE (atomically), usable as\n"
		"                   --cluster FILE in plan, sim and sweep\n"
		"\n"
		"Alibaba 2023 GPU trace node list (clusters only):\n"
		"  --from-alibaba F build a cluster from openb_node_list_gpu_node.csv\n"
		"                   (sn,cpu_milli,memory_mib,gpu,model): one node per row\n"
		"                   named by its sn; models T4, P100, V100M16, V100M32, A10\n"
		"                   as t4, p100, v100, v100-32gb, a10, and the undisclosed\n"
		"                   G2, G3 assumed a100-40gb, a100-80gb (docs/jobspec.md);\n"
		"                   PCIe 3.0 x16 and 25 GbE links (assumed: the trace has\n"
		"                   none); nodes with 0 GPUs are left out and counted\n"
		"  --gpu-alias L    replace the mapping: CODE=GPU[,CODE=GPU...] with any\n"
		"                   catalog GPU, e.g. G2=v100-32gb\n"
		"\n"
		"Examples:\n"
		"  hetbatch catalog gpus\n"
		"  hetbatch catalog models resnet50\n"
		"  hetbatch catalog gpus \"Tesla T4\"\n"
		"  hetbatch catalog clusters jabas-c --json > my-cluster.json\n"
		"  hetbatch catalog clusters my-cluster.json\n"
		"  hetbatch catalog clusters --from-philly tests/fixtures/traces/machines_good.csv \\\n"
		"      --out philly.json\n"
		"  hetbatch catalog clusters --from-alibaba data/alibaba/openb_node_list_gpu_node.csv \\\n"
		"      --out alibaba.json\n"
		"\n"
		"Exit status: 0 ok, 2 unknown list or name, or an invalid file.\n");
}

static int print_json(const struct hb_cli *cli, cJSON *root)
{
	struct hb_error err = { 0 };
	int bad = hb_json_print(stdout, root, &err) < 0;

	cJSON_Delete(root);
	return bad ? hb_cli_fail(cli, &err) : 0;
}

/* A JSON listing of every entry of one kind. */
static int list_json(const struct hb_cli *cli, const struct hb_catalog *cat, enum kind k)
{
	static const char *const keys[] = { "gpus", "models", "clusters" };
	int n = k == K_GPU ? cat->ngpus : k == K_MODEL ? cat->nmodels : cat->nclusters;
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();

	if (!root || !arr || !cJSON_AddItemToObject(root, keys[k], arr)) {
		cJSON_Delete(arr);
		cJSON_Delete(root);
		return print_json(cli, NULL);
	}
	for (int i = 0; i < n; i++) {
		cJSON *e = k == K_GPU ? hb_gpu_to_json(&cat->gpus[i])
			   : k == K_MODEL ? hb_model_to_json(&cat->models[i])
					  : hb_cluster_to_json(cat, &cat->clusters[i]);

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			cJSON_Delete(root);
			return print_json(cli, NULL);
		}
	}
	return print_json(cli, root);
}

/* ---------------------------------------------------------------- tables */

static void list_gpus(const struct hb_catalog *cat)
{
	printf("%-16s %7s %7s %8s %8s %7s  %s\n", "NAME", "FP32", "TENSOR", "MEM_GiB", "BW_GB/s", "$/h", "DISPLAY");
	for (int i = 0; i < cat->ngpus; i++) {
		const struct hb_gpu *g = &cat->gpus[i];

		printf("%-16s %7.2f %7.1f %8.2f %8.0f %7.3f  %s\n", g->name, g->fp32_tflops, g->tensor_tflops,
		       g->mem_bytes / GIB, g->mem_bw / 1e9, g->price_per_hour, g->display);
	}
	printf("\nFP32 and TENSOR in TFLOPS (effective, after any power cap); $/h: JABAS Eq. 8 = %.2f x nominal "
	       "TFLOPS / %.2f unless the data sets a price.\n",
	       HB_PRICE_V100_PER_HOUR, HB_PRICE_V100_TFLOPS);
}

static void list_models(const struct hb_catalog *cat)
{
	/* GFLOP/SAMPLE, not GFLOP/S: a forward pass's work per sample, not a rate */
	printf("%-18s %-6s %9s %12s %10s %6s %15s %7s %-6s %7s\n", "NAME", "FAMILY", "PARAMS_M", "GFLOP/SAMPLE", "DATASET",
	       "M0", "GLOBAL_BATCH", "MIN_LBS", "OPTIM", "EPOCHS");
	for (int i = 0; i < cat->nmodels; i++) {
		const struct hb_model *m = &cat->models[i];
		char range[40];

		snprintf(range, sizeof(range), "%ld..%ld", m->min_gbs, m->max_gbs);
		printf("%-18s %-6s %9.1f %12.4g %10.0f %6ld %15s %7ld %-6s %7g\n", m->name, m->family, m->params / 1e6,
		       m->flops_per_sample / 1e9, m->dataset_size, m->m0, range, m->min_lbs, m->optimizer,
		       m->target_epochs);
	}
	printf("\nGFLOP/SAMPLE: forward-pass GFLOP per sample; DATASET: samples per epoch; GLOBAL_BATCH: default bounds "
	       "(per-cluster overrides in the detailed view).\n");
}

/* "4 v100, 4 p100" style summary of a cluster's GPU types, in order of
 * appearance.  One pass over the nodes with a count per catalog GPU type
 * (a Philly machine list has 100k nodes but only a few types), so the cost
 * is O(nodes + types), not O(nodes^2).  Without memory for the counts the
 * summary is "?". */
static void gpu_mix(const struct hb_catalog *cat, const struct hb_cluster *c, char *buf, size_t size)
{
	size_t types = cat->ngpus > 0 ? (size_t)cat->ngpus : 1;
	long *count = calloc(types, sizeof(long));  /* GPUs per catalog type */
	int *order = calloc(types, sizeof(int));     /* types seen, first appearance first */
	char *seen = calloc(types, 1);
	int ntypes = 0;
	size_t used = 0;

	buf[0] = '\0';
	if (!count || !order || !seen) {
		hb_strlcpy(buf, "?", size);
		goto out;
	}
	for (int i = 0; i < c->nnodes; i++) {
		int g = c->nodes[i].gpu;

		if (g < 0 || g >= cat->ngpus)
			continue;
		if (!seen[g]) {
			seen[g] = 1;
			order[ntypes++] = g;
		}
		count[g] += c->nodes[i].ngpus;
	}
	for (int k = 0; k < ntypes && used < size; k++)
		used += (size_t)snprintf(buf + used, size - used, "%s%ld %s", used ? ", " : "", count[order[k]],
					 cat->gpus[order[k]].name);
out:
	free(count);
	free(order);
	free(seen);
}

static void list_clusters(const struct hb_catalog *cat)
{
	char mix[512];

	printf("%-18s %6s %6s %9s  %s\n", "NAME", "NODES", "GPUS", "$/h", "GPU TYPES");
	for (int i = 0; i < cat->nclusters; i++) {
		const struct hb_cluster *c = &cat->clusters[i];

		gpu_mix(cat, c, mix, sizeof(mix));
		printf("%-18s %6d %6d %9.2f  %s\n", c->name, c->nnodes, c->ngpus, hb_cluster_price_per_hour(cat, c), mix);
	}
}

/* ---------------------------------------------------------------- details */

static void show_gpu(const struct hb_gpu *g)
{
	printf("gpu %s: %s\n", g->name, g->display);
	if (g->naliases) {
		printf("  %-18s", "aliases");
		for (int i = 0; i < g->naliases; i++)
			printf("%s\"%s\"", i ? ", " : "", g->aliases[i]);
		printf("\n");
	}
	if (g->base[0])
		printf("  %-18s%.0f%% board power of %s (speed x%.3f)\n", "power cap", g->power_cap * 100, g->base,
		       g->fp32_tflops / g->nominal_tflops);
	printf("  %-18s%.2f TFLOPS\n", "fp32", g->fp32_tflops);
	printf("  %-18s%.2f TFLOPS\n", "nominal fp32", g->nominal_tflops);
	printf("  %-18s%.1f TFLOPS\n", "tensor (dense)", g->tensor_tflops);
	printf("  %-18s%.0f MiB (%.0f bytes)\n", "memory", g->mem_bytes / MIB, g->mem_bytes);
	printf("  %-18s%.1f GB/s\n", "memory bandwidth", g->mem_bw / 1e9);
	if (g->price_overridden)
		printf("  %-18s$%.3f per GPU-hour (set by the data)\n", "price", g->price_per_hour);
	else
		printf("  %-18s$%.3f per GPU-hour (JABAS Eq. 8: %.2f x %.2f / %.2f)\n", "price", g->price_per_hour,
		       HB_PRICE_V100_PER_HOUR, g->nominal_tflops, HB_PRICE_V100_TFLOPS);
	printf("  %-18s%s\n", "source", g->source);
}

static void show_model(const struct hb_model *m)
{
	double total = 0;

	for (int i = 0; i < m->nbuckets; i++)
		total += m->buckets[i];
	printf("model %s: %s\n", m->name, m->display);
	printf("  %-22s%s on %s (%s benchmarks)\n", "task", m->task, m->dataset, m->family);
	printf("  %-22s%.4g M (%g bytes each on the GPU%s)\n", "parameters", m->params / 1e6, m->param_bytes,
	       m->opt_offload ? "; optimizer state offloaded to host" : "");
	printf("  %-22s%.4g GFLOP forward per sample (backward 2x)\n", "compute", m->flops_per_sample / 1e9);
	printf("  %-22s%.1f MiB per sample\n", "activations", m->act_bytes_per_sample / MIB);
	printf("  %-22s%d, %.2f MiB in all, last %.2f MiB\n", "gradient buckets", m->nbuckets, total / MIB,
	       m->nbuckets ? m->buckets[m->nbuckets - 1] / MIB : 0.0);
	if (m->nbuckets <= 8) {
		printf("  %-22s", "bucket sizes (MiB)");
		for (int i = 0; i < m->nbuckets; i++)
			printf("%s%.2f", i ? ", " : "", m->buckets[i] / MIB);
		printf("\n");
	}
	printf("  %-22s%s, %g bytes/param of state; checkpoint %.2f GiB\n", "optimizer", m->optimizer,
	       m->opt_state_bytes_per_param, hb_model_checkpoint_bytes(m) / GIB);
	printf("  %-22s%.0f samples per epoch; target %g M0-equivalent epochs\n", "dataset", m->dataset_size,
	       m->target_epochs);
	printf("  %-22sM0 %ld, global %ld..%ld, local >= %ld (multiples)\n", "batch sizes", m->m0, m->min_gbs,
	       m->max_gbs, m->min_lbs);
	printf("  %-22sLR rule %s; gamma %g, rate %g every %ld iterations\n", "adaptation", m->lr_rule, m->gamma,
	       m->adapt_rate, m->adapt_interval);
	for (int i = 0; i < m->noverrides; i++) {
		const struct hb_model_override *o = &m->overrides[i];
		double gamma;
		long lo, hi;

		hb_model_bounds(m, o->cluster, &gamma, &lo, &hi);
		printf("  %-22son %s: gamma %g, global %ld..%ld\n", i ? "" : "cluster overrides", o->cluster, gamma, lo,
		       hi);
	}
	printf("  %-22s", "noise scale phi(f)");
	for (int i = 0; i < m->ngns; i++)
		printf("%s%g: %g", i ? ", " : "", m->gns_frac[i], m->gns_phi[i]);
	printf("\n");
	printf("  %-22s%g\n", "similarity noise", m->sim_noise_sigma);
	printf("  %-22sforward %.4f; data %.3g ms/sample; BN sync %.3g ms; init %g s\n", "timing", m->fwd_fraction,
	       m->data_s_per_sample * 1e3, m->bn_sync_s * 1e3, m->init_s);
	printf("  %-22s%s\n", "source", m->source);
	if (m->arch.cls[0])
		printf("  %-22s%s (synthetic workload template): %s\n", "architecture", m->arch.cls, m->arch.source);
}

static void show_cluster(const struct hb_catalog *cat, const struct hb_cluster *c)
{
	char mix[512];
	int shown = 0;

	gpu_mix(cat, c, mix, sizeof(mix));
	printf("cluster %s: %s\n", c->name, c->display);
	printf("  %-18s%d %s, %d %s: %s\n", "size", c->nnodes, hb_plural(c->nnodes, "node", "nodes"), c->ngpus,
	       hb_plural(c->ngpus, "GPU", "GPUs"), mix);
	printf("  %-18s$%.2f per hour (all GPUs)\n", "price", hb_cluster_price_per_hour(cat, c));
	printf("  %-18s%.3g GB/s checkpoint storage, %g s restart latency\n", "restarts", c->storage_bw / 1e9,
	       c->restart_latency_s);
	printf("  %-18s%s\n", "source", c->source);
	printf("  %-16s %-16s %4s %-12s %9s %-12s %9s %5s\n", "NODE", "GPU", "GPUS", "INTRA", "GB/s", "INTER", "GB/s",
	       "RACK");
	for (int i = 0; i < c->nnodes; i++) {
		const struct hb_node *n = &c->nodes[i];

		if (shown++ == 32) {
			printf("  ... %d more nodes (--json lists them as groups)\n", c->nnodes - 32);
			break;
		}
		printf("  %-16s %-16s %4d %-12s %9.2f %-12s %9.2f %5d\n", n->name, cat->gpus[n->gpu].name, n->ngpus,
		       n->intra_link, n->intra_bw / 1e9, n->inter_link, n->inter_bw / 1e9, n->rack);
	}
}

/* ---------------------------------------------------------------- command */

/* --from-philly: convert, load the result (the loader validates it), then
 * show, print or write it. */
static int from_philly(struct hb_cli *cli, struct hb_catalog *cat, const char *path, const char *name,
		       const char *out, int json)
{
	struct hb_philly_machines info;
	struct hb_error err = { 0 };
	const struct hb_cluster *c;
	cJSON *doc = NULL;
	char *text = NULL;
	int rc = 0;

	if (hb_philly_machines_to_cluster(cat, path, name, &doc, &info, &err) < 0)
		return hb_cli_fail(cli, &err);
	text = cJSON_PrintUnformatted(doc);
	if (!text) {
		cJSON_Delete(doc);
		hb_runtime_error(&err, "%s: out of memory", path);
		return hb_cli_fail(cli, &err);
	}
	if (hb_catalog_load_json(cat, text, strlen(text), path, &err) < 0 ||
	    !(c = hb_catalog_cluster(cat, name))) {
		if (err.code == HB_OK)
			hb_runtime_error(&err, "%s: converted cluster %s not found", path, name);
		rc = hb_cli_fail(cli, &err);
	} else if (out && hb_json_write_file(out, doc, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
	} else if (json) {
		rc = hb_json_print(stdout, doc, &err) < 0 ? hb_cli_fail(cli, &err) : 0;
	} else {
		show_cluster(cat, c);
		printf("\n%s: %ld %s, %ld %s (%ld p40 from 24 GB, %ld p100 from 12 GB); %ld %s with 0 GPUs "
		       "left out\n",
		       path, info.machines, hb_plural(info.machines, "machine", "machines"), info.gpus,
		       hb_plural(info.gpus, "GPU", "GPUs"), info.gpus_24gb, info.gpus_12gb, info.skipped,
		       hb_plural(info.skipped, "machine", "machines"));
		if (out)
			printf("written to %s\n", out);
	}
	free(text);
	cJSON_Delete(doc);
	return rc;
}

/* --from-alibaba: convert, load (the loader validates), then show, print
 * or write, as --from-philly. */
static int from_alibaba(struct hb_cli *cli, struct hb_catalog *cat, const char *path, const char *name,
			const char *aliases, const char *out, int json)
{
	struct hb_alibaba_gpus map;
	struct hb_alibaba_nodes info;
	struct hb_error err = { 0 };
	const struct hb_cluster *c;
	cJSON *doc = NULL;
	char *text = NULL;
	int rc = 0;

	hb_alibaba_gpus_default(&map);
	if ((aliases && hb_alibaba_gpus_parse(&map, cat, aliases, &err) < 0) ||
	    hb_alibaba_nodes_to_cluster(cat, path, name, &map, &doc, &info, &err) < 0)
		return hb_cli_fail(cli, &err);
	text = cJSON_PrintUnformatted(doc);
	if (!text) {
		cJSON_Delete(doc);
		hb_runtime_error(&err, "%s: out of memory", path);
		return hb_cli_fail(cli, &err);
	}
	if (hb_catalog_load_json(cat, text, strlen(text), path, &err) < 0 ||
	    !(c = hb_catalog_cluster(cat, name))) {
		if (err.code == HB_OK)
			hb_runtime_error(&err, "%s: converted cluster %s not found", path, name);
		rc = hb_cli_fail(cli, &err);
	} else if (out && hb_json_write_file(out, doc, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
	} else if (json) {
		rc = hb_json_print(stdout, doc, &err) < 0 ? hb_cli_fail(cli, &err) : 0;
	} else {
		show_cluster(cat, c);
		printf("\n%s: %ld %s, %ld %s (", path, info.nodes, hb_plural(info.nodes, "node", "nodes"), info.gpus,
		       hb_plural(info.gpus, "GPU", "GPUs"));
		for (int k = 0, first = 1; k < HB_ALIBABA_NGPUS; k++) {
			if (!info.gpus_by_code[k])
				continue;
			printf("%s%ld %s as %s", first ? "" : ", ", info.gpus_by_code[k], hb_alibaba_gpu_code(k),
			       hb_alibaba_gpu(&map, hb_alibaba_gpu_code(k)));
			first = 0;
		}
		printf("); %ld %s with 0 GPUs left out\n", info.skipped, hb_plural(info.skipped, "node", "nodes"));
		if (out)
			printf("written to %s\n", out);
	}
	free(text);
	cJSON_Delete(doc);
	return rc;
}

static int parse_kind(const char *word, enum kind *k)
{
	static const char *const words[][2] = { { "gpus", "gpu" }, { "models", "model" }, { "clusters", "cluster" } };

	for (int i = 0; i < 3; i++)
		if (strcmp(word, words[i][0]) == 0 || strcmp(word, words[i][1]) == 0) {
			*k = (enum kind)i;
			return 0;
		}
	return -1;
}

int cmd_catalog(int argc, char **argv, struct hb_cli *cli)
{
	const char *pos[2] = { NULL, NULL };
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	const char *philly = NULL, *alibaba = NULL, *aliases = NULL, *name = NULL, *out = NULL;
	int json = 0, npos = 0, only_pos = 0, rc = 0;
	enum kind k;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!only_pos && strcmp(a, "--") == 0) {
			only_pos = 1;
		} else if (!only_pos && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
			usage(stdout);
			return 0;
		} else if (!only_pos && strcmp(a, "--json") == 0) {
			json = 1;
		} else if (!only_pos && (strcmp(a, "--from-philly") == 0 || strcmp(a, "--from-alibaba") == 0 ||
					 strcmp(a, "--gpu-alias") == 0 || strcmp(a, "--name") == 0 ||
					 strcmp(a, "--out") == 0)) {
			const char **dst = strcmp(a, "--from-philly") == 0	? &philly
					   : strcmp(a, "--from-alibaba") == 0 ? &alibaba
					   : strcmp(a, "--gpu-alias") == 0	? &aliases
					   : strcmp(a, "--name") == 0		? &name
										: &out;

			if (i + 1 >= argc || !argv[i + 1][0])
				return hb_cli_usage(cli, "catalog", "%s needs a value", a);
			*dst = argv[++i];
		} else if (!only_pos && a[0] == '-' && a[1]) {
			/* parsed by hand above; this table only names them for the message */
			static const struct option opts[] = {
				{ "help", no_argument, NULL, 'h' },          { "json", no_argument, NULL, 0 },
				{ "from-philly", required_argument, NULL, 0 }, { "name", required_argument, NULL, 0 },
				{ "from-alibaba", required_argument, NULL, 0 }, { "gpu-alias", required_argument, NULL, 0 },
				{ "out", required_argument, NULL, 0 },        { NULL, 0, NULL, 0 },
			};

			return hb_cli_unknown_option(cli, "catalog", a, opts);
		} else if (npos == 2) {
			return hb_cli_usage(cli, "catalog", "unexpected argument '%s'", a);
		} else {
			pos[npos++] = a;
		}
	}
	if (npos == 0)
		return hb_cli_usage(cli, "catalog", "say what to list: gpus, models or clusters");
	if (parse_kind(pos[0], &k)) {
		static const char *const lists[] = { "gpus", "models", "clusters", NULL };
		char hint[128];

		return hb_cli_usage(cli, "catalog", "unknown list '%s' (expected gpus, models or clusters)%s", pos[0],
				    hb_cli_suggest(pos[0], lists, hint, sizeof(hint)));
	}
	if ((philly || alibaba || out) && (k != K_CLUSTER || pos[1]))
		return hb_cli_usage(cli, "catalog", "--from-philly, --from-alibaba and --out go with 'clusters' and no NAME");
	if (philly && alibaba)
		return hb_cli_usage(cli, "catalog", "--from-philly and --from-alibaba exclude each other");
	if ((out || name) && !philly && !alibaba)
		return hb_cli_usage(cli, "catalog", "--out and --name need --from-philly or --from-alibaba");
	if (aliases && !alibaba)
		return hb_cli_usage(cli, "catalog", "--gpu-alias needs --from-alibaba");
	if (hb_catalog_load_builtin(&cat, &err))
		return hb_cli_fail(cli, &err);
	if (philly) {
		rc = from_philly(cli, &cat, philly, name ? name : "philly-machines", out, json);
	} else if (alibaba) {
		rc = from_alibaba(cli, &cat, alibaba, name ? name : "alibaba-openb", aliases, out, json);
	} else if (!pos[1]) {
		if (json)
			rc = list_json(cli, &cat, k);
		else if (k == K_GPU)
			list_gpus(&cat);
		else if (k == K_MODEL)
			list_models(&cat);
		else
			list_clusters(&cat);
	} else if (k == K_GPU) {
		const struct hb_gpu *g;

		if (hb_catalog_resolve_gpu(&cat, pos[1], &g, &err))
			rc = hb_cli_fail(cli, &err);
		else if (json)
			rc = print_json(cli, hb_gpu_to_json(g));
		else
			show_gpu(g);
	} else if (k == K_MODEL) {
		const struct hb_model *m;

		if (hb_catalog_resolve_model(&cat, pos[1], &m, &err))
			rc = hb_cli_fail(cli, &err);
		else if (json)
			rc = print_json(cli, hb_model_to_json(m));
		else
			show_model(m);
	} else {
		const struct hb_cluster *c;

		if (hb_catalog_resolve_cluster(&cat, pos[1], &c, &err))
			rc = hb_cli_fail(cli, &err);
		else if (json)
			rc = print_json(cli, hb_cluster_to_json(&cat, c));
		else
			show_cluster(&cat, c);
	}
	hb_catalog_free(&cat);
	return rc;
}
