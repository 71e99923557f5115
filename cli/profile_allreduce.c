/*
 * profile_allreduce.c: `hetbatch profile allreduce --backend cpu|cuda
 * [--sizes LIST] [--link NAME | --cluster C] [--bandwidth B/s] ...`.
 *
 * Measures all-reduce time over JABAS's bucket sizes (profiler/allreduce.h),
 * prints an nccl-tests-like table and writes allreduce rows and the JABAS
 * Eq. 3 fit (allreduce_fit) into the profile database.
 *
 * Order of work, so that nothing is measured for a run that cannot be kept:
 * start the MPI team (under mpirun), read the options, resolve the link and
 * its bandwidth K, check for a CUDA device (--backend cuda), open the
 * database on rank 0, sweep on every rank, write and print on rank 0.  Under
 * mpirun only rank 0 prints: the other ranks' stdout and stderr go to
 * /dev/null, and their failures reach rank 0 through hb_ar_team_agree.
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allreduce.h"
#include "catalog.h"
#include "cli.h"
#include "default_db.h" /* defines: hb_user_profdb_path, hb_user_profdb_for_writing */
#include "import.h"
#include "json.h"
#include "profdb.h"
#include "progress.h"
#include "strutil.h"

#define CMD "profile allreduce"
#define MIN_BANDWIDTH 1e6    /* B/s: below this, --bandwidth was surely given in GB/s */
#define MAX_BANDWIDTH 1e15
#define MAX_LAUNCHES 10000000L

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hetbatch profile allreduce --backend cpu|cuda [--sizes LIST]\n"
		"                                  [--link NAME | --cluster C] [--bandwidth B/s]\n"
		"                                  [--warmup N] [--iters N] [--db FILE] [--json]\n"
		"       mpirun -np N hetbatch profile allreduce --backend cpu|cuda ...\n"
		"\n"
		"Measure all-reduce time per tensor size, as JABAS's communication profiler\n"
		"does (JABAS Eq. 3; iidp/profiler/comm), timed as nccl-tests does: per size,\n"
		"warm-up launches, a barrier, then --iters timed launches; time = mean per\n"
		"launch on each rank, the max over ranks.  float32 sum, in place.\n"
		"algbw = bytes / time; busbw = algbw * 2(N-1)/N (nccl-tests' bus bandwidth).\n"
		"The rows go into the profile database (table allreduce), replacing this\n"
		"backend's earlier rows for the same scope and link, and JABAS Eq. 3,\n"
		"  t_ms = alpha * x_ms + beta,   x_ms = d * 4(N-1)/N / K * 1000,\n"
		"is fitted to them (table allreduce_fit; alpha, beta ms, r2), which the\n"
		"planner and simulator use for that (scope, link).\n"
		"\n"
		"Backends:\n"
		"  cpu    MPI_Allreduce over the ranks of mpirun (source \"cpu\"); one\n"
		"         process without mpirun is one rank, whose all-reduce is a no-op\n"
		"  cuda   NCCL: under mpirun one GPU per rank (the rank's index on its\n"
		"         host); without mpirun every visible GPU of this process;\n"
		"         CUDA-event timing (source \"events\"); exit 1 without a GPU\n"
		"Scope: intra when every rank runs on one host, else inter.\n"
		"\n"
		"Options:\n"
		"  --backend B       cpu or cuda (required)\n"
		"  --sizes LIST      tensor sizes, comma-separated: MiB (JABAS's \"MB\"), or\n"
		"                    a number with suffix B, K, M or G (bytes, KiB, MiB,\n"
		"                    GiB); whole float32 counts (default: JABAS's bucket\n"
		"                    caps 1,5,10,15,20,25,50,100,150)\n"
		"  --link NAME       the link class the ranks talk over, as the cluster\n"
		"                    files name it (pcie3-x16, nvlink3, ib-100g, ...); K is\n"
		"                    the bandwidth the catalog's clusters give it\n"
		"  --cluster C       a built-in cluster or cluster JSON file: the link (and\n"
		"                    K) of its nodes for this scope (intra_link or\n"
		"                    inter_link)\n"
		"  --bandwidth B/s   K in bytes/s (e.g. 15.75e9): required for a link the\n"
		"                    catalog does not know, overrides the catalog's K\n"
		"                    otherwise; alone, it names the link after K\n"
		"                    (ib-100g, ..., or bw-<K>)\n"
		"                    Without any of the three, a one-GPU run is stored\n"
		"                    under link \"none\"; more GPUs need the link.\n"
		"  --warmup N        untimed launches per size (default: cpu 2, cuda 5)\n"
		"  --iters N         timed launches per size (default: cpu 10, cuda 100;\n"
		"                    JABAS used 1000)\n"
		"  --db FILE         profile database (created if missing; default your\n"
		"                    profile database, $%s/%s or\n"
		"                    ~/.local/share/hetbatch/%s, which plan and sim read)\n"
		"  --json            print the result as JSON instead of the table\n"
		"  -h, --help        this help\n"
		"\n"
		"With one GPU (or one rank) x = d 4(N-1)/N / K is 0 for every size: the rows\n"
		"are written and no fit is made.  Multi-GPU curves come from a multi-GPU\n"
		"host (mpirun -np N, or cuda without mpirun) or from measured nccl-tests\n"
		"output ('hetbatch import nccl-tests').\n"
		"\n"
		"Examples:\n"
		"  hetbatch profile allreduce --backend cpu --sizes 1,2 --iters 3 --db tmp.db\n"
		"  mpirun --oversubscribe -np 2 hetbatch profile allreduce --backend cpu --sizes 1,5,10\n"
		"  mpirun -np 2 hetbatch profile allreduce --backend cpu --link shm --bandwidth 10e9\n"
		"  hetbatch profile allreduce --backend cuda --link nvlink4 --db h100.db\n"
		"  mpirun -np 8 hetbatch profile allreduce --backend cuda --cluster jabas-a --iters 1000\n"
		"  mpirun -np 16 -npernode 8 hetbatch profile allreduce --backend cuda --link ib-ndr-8x\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure (no CUDA device, MPI, NCCL, database),\n"
		"2 usage error or bad value.\n",
		HB_USER_DB_ENV, HB_USER_DB_NAME, HB_USER_DB_NAME);
}

struct ar_args {
	const char *backend;
	const char *link;             /* --link */
	const char *cluster;          /* --cluster */
	const char *db;               /* --db, or user_db */
	char user_db[4096];           /* the user's profile database (default_db.h) when no --db */
	double bandwidth;             /* --bandwidth, 0 if not given */
	double bytes[HB_AR_MAX_SIZES];
	int nsizes;
	int warmup, iters;            /* -1: the backend's default */
	int json;
};

/* The link the rows are stored under and its K (0: none, no fit). */
struct ar_link {
	char name[64];
	double bandwidth;
	const char *from;             /* how K was found, for the header */
};

static int parse_count(struct hb_cli *cli, const char *opt, const char *v, long lo, int *out)
{
	long n;

	if (hb_parse_long_range(v, lo, MAX_LAUNCHES, &n) < 0)
		return hb_cli_usage(cli, CMD, "%s: value '%s' must be an integer in [%ld, %ld]", opt, v, lo,
				    MAX_LAUNCHES);
	*out = (int)n;
	return 0;
}

/* 0 ok, 1 --help printed, 2 usage error (printed). */
static int parse_args(int argc, char **argv, struct hb_cli *cli, struct ar_args *a)
{
	enum { OPT_BACKEND = 256, OPT_SIZES, OPT_LINK, OPT_CLUSTER, OPT_BANDWIDTH, OPT_WARMUP, OPT_ITERS, OPT_DB,
	       OPT_JSON };
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "link", required_argument, NULL, OPT_LINK },
		{ "cluster", required_argument, NULL, OPT_CLUSTER },
		{ "bandwidth", required_argument, NULL, OPT_BANDWIDTH },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "db", required_argument, NULL, OPT_DB },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hb_error err = { 0 };
	int c;

	memset(a, 0, sizeof(*a));
	a->db = NULL;
	a->warmup = a->iters = -1;
	a->nsizes = hb_allreduce_jabas_sizes(a->bytes, HB_AR_MAX_SIZES);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_BACKEND:
			if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "cuda") != 0)
				return hb_cli_usage(cli, CMD, "--backend: value '%s' is not a backend (cpu, cuda)", optarg);
			a->backend = optarg;
			break;
		case OPT_SIZES:
			if (hb_allreduce_parse_sizes(optarg, a->bytes, HB_AR_MAX_SIZES, &a->nsizes, &err) < 0)
				return hb_cli_usage(cli, CMD, "--sizes: %s", err.msg);
			break;
		case OPT_LINK:
			if (!*optarg || strlen(optarg) >= sizeof(((struct ar_link *)0)->name))
				return hb_cli_usage(cli, CMD, "--link: value '%.80s' must be a name of 1 to %zu characters",
						    optarg, sizeof(((struct ar_link *)0)->name) - 1);
			a->link = optarg;
			break;
		case OPT_CLUSTER: a->cluster = optarg; break;
		case OPT_BANDWIDTH:
			if (hb_parse_double(optarg, &a->bandwidth) < 0 || !(a->bandwidth > 0) ||
			    a->bandwidth > MAX_BANDWIDTH)
				return hb_cli_usage(cli, CMD, "--bandwidth: value '%s' is not a bandwidth in bytes/s "
						    "(a number in (0, %g], e.g. 15.75e9)", optarg, MAX_BANDWIDTH);
			if (a->bandwidth < MIN_BANDWIDTH)
				return hb_cli_usage(cli, CMD, "--bandwidth: value '%s' B/s is below 1 MB/s; the unit "
						    "is bytes per second (10e9 for 10 GB/s)", optarg);
			break;
		case OPT_WARMUP:
			if (parse_count(cli, "--warmup", optarg, 0, &a->warmup))
				return 2;
			break;
		case OPT_ITERS:
			if (parse_count(cli, "--iters", optarg, 1, &a->iters))
				return 2;
			break;
		case OPT_DB: a->db = optarg; break;
		case OPT_JSON: a->json = 1; break;
		case 'h': usage(stdout); return 1;
		default:
			return hb_cli_bad_option(cli, CMD, argc, argv, opts);
		}
	}
	if (optind < argc)
		return hb_cli_usage(cli, CMD, "unexpected argument '%s'", argv[optind]);
	if (!a->backend)
		return hb_cli_usage(cli, CMD, "--backend cpu|cuda is required");
	if (a->link && a->cluster)
		return hb_cli_usage(cli, CMD, "--link '%s' and --cluster '%s' both name the link; give one", a->link,
				    a->cluster);
	if (!a->db) {
		if (hb_user_profdb_path(a->user_db, sizeof(a->user_db), &err) < 0)
			return hb_cli_fail(cli, &err);
		a->db = a->user_db;
	}
	if (a->warmup < 0)
		a->warmup = strcmp(a->backend, "cpu") == 0 ? 2 : 5;
	if (a->iters < 0)
		a->iters = strcmp(a->backend, "cpu") == 0 ? 10 : 100;
	return 0;
}

/* The link and K from --link, --cluster and --bandwidth (0, or 2 after a
 * usage message, or 1 after a runtime failure).  n: the participants, when
 * known before the sweep (0 if not). */
static int resolve_link(struct hb_cli *cli, const struct ar_args *a, const char *scope, int n, struct ar_link *l)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	int rc = 0;

	memset(l, 0, sizeof(*l));
	if (!a->link && !a->cluster) {
		if (a->bandwidth > 0) {
			hb_import_link_class(a->bandwidth, l->name, sizeof(l->name));
			l->bandwidth = a->bandwidth;
			l->from = "--bandwidth";
			return 0;
		}
		if (n >= 2)
			return hb_cli_usage(cli, CMD, "%d participants: the Eq. 3 fit needs the link and its bandwidth K; "
					    "give --link NAME, --cluster C or --bandwidth B/s", n);
		hb_strlcpy(l->name, "none", sizeof(l->name));
		return 0;
	}
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	if (a->link) {
		char known[1024];
		int as_intra = 0, as_inter = 0;
		int found = hb_allreduce_catalog_link(&cat, a->link, &l->bandwidth, &as_intra, &as_inter, &err);

		hb_strlcpy(l->name, a->link, sizeof(l->name));
		if (found < 0) {
			rc = a->bandwidth > 0 ? 0 : hb_cli_usage(cli, CMD, "--link: %s; give K with --bandwidth", err.msg);
		} else if (found == 0 && !(a->bandwidth > 0)) {
			hb_allreduce_catalog_links(&cat, known, sizeof(known));
			rc = hb_cli_usage(cli, CMD, "--link: value '%s' is not a link class of the catalog's clusters "
					  "(%s); for a new one give its bandwidth with --bandwidth B/s", a->link, known);
		} else if (found == 1) {
			l->from = "catalog";
			if ((strcmp(scope, "intra") == 0 && !as_intra) || (strcmp(scope, "inter") == 0 && !as_inter))
				hb_warn(&cli->log, "--link %s: the catalog's clusters use it as an %s-node link, this "
					"run's scope is %s", a->link, as_intra ? "intra" : "inter", scope);
		}
	} else {
		const struct hb_cluster *cl;

		if (hb_catalog_resolve_cluster(&cat, a->cluster, &cl, &err) < 0 ||
		    hb_allreduce_cluster_link(cl, scope, l->name, sizeof(l->name), &l->bandwidth, &err) < 0)
			rc = hb_cli_usage(cli, CMD, "--cluster: %s", err.msg);
		else
			l->from = "cluster";
	}
	if (rc == 0 && a->bandwidth > 0) {
		if (l->from && l->bandwidth != a->bandwidth)
			hb_info(&cli->log, "%s: --bandwidth %.4g B/s replaces the %s's %.4g B/s", l->name, a->bandwidth,
				l->from, l->bandwidth);
		l->bandwidth = a->bandwidth;
		l->from = "--bandwidth";
	}
	hb_catalog_free(&cat);
	return rc;
}

static void on_progress(void *ctx, int done, int total)
{
	(void)total;
	hb_progress_update(ctx, done);
}

/* Only rank 0 prints (the others' failures reach it through agree). */
static void silence(void)
{
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

#define NO_FIT_NOTE "Multi-GPU curves come from a multi-GPU host (mpirun -np N hetbatch profile allreduce ...) " \
	"or from nccl-tests output ('hetbatch import nccl-tests')."

static const char *participants(const struct hb_ar_result *r, const char *backend)
{
	return strcmp(backend, "cpu") == 0 ? (r->n_gpus == 1 ? "rank" : "ranks") : (r->n_gpus == 1 ? "GPU" : "GPUs");
}

static void print_table(const struct ar_args *a, const struct hb_ar_result *r, const struct ar_link *l)
{
	printf("# all-reduce sweep: backend %s, %s; float32 sum, in place\n", a->backend, r->method);
	printf("# %d %s on %d host%s: scope %s, link %s", r->n_gpus, participants(r, a->backend), r->nhosts,
	       r->nhosts == 1 ? "" : "s", r->scope, l->name);
	if (l->bandwidth > 0)
		printf(", K = %.4g GB/s (%s)", l->bandwidth / 1e9, l->from);
	printf("\n# %d warm-up + %d timed launches per size; time = mean per launch, max over ranks\n#\n", r->warmup,
	       r->iters);
	printf("# %14s %12s %11s %12s %12s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
	for (int i = 0; i < r->npoints; i++) {
		const struct hb_ar_point *p = &r->points[i];

		/* one participant moves nothing: no bandwidth to speak of */
		if (r->n_gpus < 2)
			printf("  %14.0f %12ld %11.2f %12s %12s\n", p->bytes, p->count, p->time_s * 1e6, "-", "-");
		else
			printf("  %14.0f %12ld %11.2f %12.3f %12.3f\n", p->bytes, p->count, p->time_s * 1e6,
			       p->algbw / 1e9, p->busbw / 1e9);
	}
}

static int print_json(const struct ar_args *a, const struct hb_ar_result *r, const struct ar_link *l,
		      const struct hb_allreduce_fit *fit, int fitted, int64_t run_id, struct hb_error *err)
{
	cJSON *doc = cJSON_CreateObject(), *pts = NULL;
	int rc;

	if (doc) {
		cJSON_AddStringToObject(doc, "backend", a->backend);
		cJSON_AddStringToObject(doc, "method", r->method);
		cJSON_AddStringToObject(doc, "scope", r->scope);
		cJSON_AddStringToObject(doc, "link", l->name);
		hb_json_add_num(doc, "bandwidth", l->bandwidth > 0 ? l->bandwidth : NAN);
		cJSON_AddNumberToObject(doc, "n_gpus", r->n_gpus);
		cJSON_AddNumberToObject(doc, "hosts", r->nhosts);
		cJSON_AddStringToObject(doc, "source", r->source);
		cJSON_AddNumberToObject(doc, "warmup", r->warmup);
		cJSON_AddNumberToObject(doc, "iters", r->iters);
		cJSON_AddStringToObject(doc, "db", a->db);
		cJSON_AddNumberToObject(doc, "run_id", (double)run_id);
		cJSON_AddStringToObject(doc, "host", r->run.host);
		cJSON_AddStringToObject(doc, "device", r->run.device);
		pts = cJSON_AddArrayToObject(doc, "points");
	}
	for (int i = 0; pts && i < r->npoints; i++) {
		cJSON *p = cJSON_CreateObject();

		if (!p || !cJSON_AddItemToArray(pts, p)) {
			cJSON_Delete(p);
			break;
		}
		hb_json_add_num(p, "bytes", r->points[i].bytes);
		hb_json_add_num(p, "count", (double)r->points[i].count);
		hb_json_add_num(p, "time_s", r->points[i].time_s);
		hb_json_add_num(p, "algbw", r->n_gpus < 2 ? NAN : r->points[i].algbw);
		hb_json_add_num(p, "busbw", r->n_gpus < 2 ? NAN : r->points[i].busbw);
	}
	if (doc && fitted) {
		cJSON *f = cJSON_AddObjectToObject(doc, "fit");

		if (f) {
			hb_json_add_num(f, "alpha", fit->alpha);
			hb_json_add_num(f, "beta_ms", fit->beta);
			hb_json_add_num(f, "r2", fit->r2);
			hb_json_add_num(f, "bandwidth", fit->bandwidth);
		}
	} else if (doc) {
		cJSON_AddNullToObject(doc, "fit");
		cJSON_AddStringToObject(doc, "note", r->n_gpus < 2 ? "N = 1: the theoretical time is 0 for every size, "
					"no Eq. 3 fit. " NO_FIT_NOTE : "no Eq. 3 fit: it needs at least 2 sizes");
	}
	rc = hb_json_print(stdout, doc, err);
	cJSON_Delete(doc);
	return rc;
}

static void print_outcome(const struct ar_args *a, const struct hb_ar_result *r, const struct ar_link *l,
			  const struct hb_allreduce_fit *fit, int fitted, int64_t run_id)
{
	printf("\n");
	if (fitted)
		printf("%s %s: t_ms = %.4f x_ms %c %.4f (r2 %.4f, K = %.4g GB/s)\n", r->scope, l->name, fit->alpha,
		       fit->beta < 0 ? '-' : '+', fabs(fit->beta), fit->r2, fit->bandwidth / 1e9);
	else if (r->n_gpus < 2)
		printf("no Eq. 3 fit: with N = 1 the theoretical time d 4(N-1)/N / K is 0 for every size.\n"
		       NO_FIT_NOTE "\n");
	else
		printf("no Eq. 3 fit: it needs at least 2 sizes.\n");
	printf("%s: %d allreduce rows (scope %s, link %s, source %s, run %lld)%s\n", a->db, r->npoints, r->scope,
	       l->name, r->source, (long long)run_id, fitted ? " and the allreduce_fit row" : "");
}

static int run(struct hb_cli *cli, const struct hb_ar_team *team, int argc, char **argv)
{
	struct ar_args a;
	struct ar_link link;
	struct hb_ar_config cfg;
	struct hb_ar_result *res = NULL;
	struct hb_allreduce_fit fit;
	struct hb_profdb *db = NULL;
	struct hb_progress prog;
	struct hb_error err = { 0 };
	int64_t run_id = 0;
	int rc, n = 0, fitted = 0;
	char why[256];

	if ((rc = parse_args(argc, argv, cli, &a)) != 0)
		return rc == 1 ? 0 : rc;
	/* participants, as far as known before the sweep */
	n = team->size;
	if (strcmp(a.backend, "cuda") == 0) {
		int ndev = hb_allreduce_cuda_devices(why, sizeof(why));

		if (hb_ar_team_agree(team, ndev > 0 ? 0 : hb_runtime_error(&err, "%s", why), &err) < 0)
			return hb_cli_fail(cli, &err);
		if (!team->mpi)
			n = ndev;
	}
	if ((rc = resolve_link(cli, &a, hb_ar_team_scope(team), n, &link)) != 0)
		return rc;
	if (!(res = calloc(1, sizeof(*res))))
		rc = hb_runtime_error(&err, "out of memory");
	if (rc == 0 && team->rank == 0 && a.db == a.user_db)
		rc = hb_user_profdb_for_writing(a.user_db, sizeof(a.user_db), &err);
	if (rc == 0 && team->rank == 0)
		rc = hb_profdb_open(a.db, 0, &db, &err);
	if (hb_ar_team_agree(team, rc, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = a.backend;
	cfg.bytes = a.bytes;
	cfg.nsizes = a.nsizes;
	cfg.warmup = a.warmup;
	cfg.iters = a.iters;
	cfg.progress = on_progress;
	cfg.progress_ctx = &prog;
	hb_progress_start_mode(&prog, "all-reduce sizes", a.nsizes, team->rank == 0 ? hb_cli_status(cli) : HB_STATUS_NEVER,
			       cli->status_period_s);
	rc = hb_allreduce_sweep(team, &cfg, res, &err);
	hb_progress_finish(&prog);
	if (rc < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	if (team->rank > 0)
		goto out;
	if (hb_allreduce_store(db, res, link.name, link.bandwidth, &fit, &fitted, &run_id, &err) < 0) {
		rc = hb_cli_fail(cli, &err);
		goto out;
	}
	if (a.json) {
		if (print_json(&a, res, &link, &fit, fitted, run_id, &err) < 0)
			rc = hb_cli_fail(cli, &err);
	} else {
		print_table(&a, res, &link);
		print_outcome(&a, res, &link, &fit, fitted, run_id);
	}
	fflush(stdout);
out:
	hb_profdb_close(db);
	free(res);
	return rc;
}

int cmd_profile_allreduce(int argc, char **argv, struct hb_cli *cli)
{
	struct hb_ar_team team;
	struct hb_error err = { 0 };
	int rc;

	if (hb_ar_team_start(&team, &argc, &argv, &err) < 0)
		return hb_cli_fail(cli, &err);
	if (team.rank > 0)
		silence();
	rc = run(cli, &team, argc, argv);
	hb_ar_team_end(&team);
	return rc;
}
