/*
 * profile_torch.c: `hetbatch profile --backend torch`: real PyTorch models
 * profiled by hetbatch's CUPTI code (issue 12 item 2).
 *
 * Per model, one run of the Python worker (profiler/torch_worker.py) with
 * the CUDA driver loading the CUPTI injection library
 * (CUDA_INJECTION64_PATH = libhetbatch_inject.so, inject.c); the worker
 * trains the model at every (local batch, VSWs) point with NVTX-marked
 * phases and writes, per point, MODEL-bB-vN.json (its own numbers: status,
 * peak memory) and MODEL-bB-vN.ktrace (the trace).  This command then
 * attributes each trace (ktrace.h) and writes one compute row per point,
 * source "torch", under one run row that says what measured it.  A point
 * whose trace shows dropped records is not kept (issue 12).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "default_db.h"  /* defines: hb_user_profdb_for_writing */
#include "fileio.h"      /* defines: hb_mkdir_p, hb_path_exists */
#include "hb_config.h"   /* HB_HAVE_GPU */
#include "interrupt.h"
#include "json.h"
#include "ktrace.h"
#include "profdb.h"
#include "strutil.h"

#define MAX_NAMES 64
#define MAX_LIST 32
#define WORKER_NAME "torch_worker.py"
#define INJECT_NAME "libhetbatch_inject.so"

/* The worker's exit codes (torch_worker.py EXIT_*). */
enum { WK_OK = 0, WK_USAGE = 2, WK_NO_TORCH = 4, WK_NO_GPU = 5, WK_OOM = 6 };

void hb_profile_torch_usage(FILE *out)
{
	fprintf(out,
		"Torch mode: real PyTorch models (random weights, nothing downloaded) trained\n"
		"with n VSW threads and streams as IIDP does, phases marked with NVTX, kernels\n"
		"recorded by hetbatch's CUPTI injection library and attributed to the phases:\n"
		"  hetbatch profile --backend torch --models LIST [--local-bs LIST] [--vsw LIST]\n"
		"                   [--warmup N] [--iters N] [--precision P] [--scale F]\n"
		"                   [--gpu-name NAME] [--trace-dir DIR] [--timeout S]\n"
		"                   [--python PATH] [--worker PATH] [--inject PATH] [--db FILE]\n"
		"  --models LIST     resnet50, vit, gnmt, bert-large, gpt3-xl, llama2-7b\n"
		"  --local-bs LIST   local batches (default: the model's min_lbs x {1, 2, 4})\n"
		"  --vsw LIST        VSW counts per local batch (default 1,2,4)\n"
		"  --warmup N        warm-up iterations, not traced into rows (default 5)\n"
		"  --iters N         measured iterations (default 20)\n"
		"  --precision P     fp32 (default), amp-bf16 or bf16\n"
		"  --scale F         keep round(F x layers) layers of the layered models\n"
		"  --trace-dir DIR   where the traces and the worker's JSON go (kept; default a\n"
		"                    new hetbatch-torch-XXXXXX under $TMPDIR, printed)\n"
		"  --timeout S       kill a model's worker after S seconds (default none)\n"
		"  --python PATH     the Python with torch (default $HETBATCH_PYTHON, python3)\n"
		"  --worker PATH     the worker (default $HETBATCH_TORCH_WORKER, beside this\n"
		"                    binary in a build tree, or the installed one)\n"
		"  --inject PATH     the injection library (default $HETBATCH_INJECT, likewise)\n"
		"  Rows: source torch; fwd, bwd (+ local aggregation), data, update, copy: mean\n"
		"  per-iteration union of the phase's kernels over all VSW streams; total: the\n"
		"  iteration's wall time; mem: the worker's peak allocated memory.  No memory\n"
		"  rows.  A point with dropped CUPTI records is not kept (exit status 1).\n");
}

struct torch_opts {
	char *models[MAX_NAMES];
	int nmodels;
	int lbs[MAX_LIST], nlbs;
	int vsw[MAX_LIST], nvsw;
	int warmup, iters;
	const char *precision;
	double scale;
	const char *gpu_name, *trace_dir, *python, *worker, *inject, *db;
	long timeout_s;
};

static int parse_int_list(char *arg, int *out, int max, int lo, int hi)
{
	char *items[MAX_LIST];
	int n = hb_split_list(arg, items, max);
	long v;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (hb_parse_long_range(items[i], lo, hi, &v) < 0)
			return -1;
		out[i] = (int)v;
	}
	return n;
}

/* The directory of this executable, "" when unknown. */
static void exe_dir(char *out, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", out, n - 1);
	char *slash;

	if (len <= 0) {
		out[0] = '\0';
		return;
	}
	out[len] = '\0';
	slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
}

/* An option, else an environment variable, else beside the binary in a
 * build tree (BUILD/cli/hetbatch -> BUILD/profiler/NAME), else the
 * installed path.  NULL when none exists. */
static const char *locate(const char *opt, const char *env, const char *name, const char *installed, char *buf,
			  size_t n)
{
	char dir[PATH_MAX];
	const char *e = getenv(env);

	if (opt)
		return opt;
	if (e && e[0])
		return e;
	exe_dir(dir, sizeof(dir));
	if (dir[0]) {
		int len = snprintf(buf, n, "%s/../profiler/%s", dir, name);

		if (len > 0 && (size_t)len < n && hb_path_exists(buf))
			return buf;
	}
	if (installed[0] && hb_path_exists(installed))
		return installed;
	return NULL;
}

static const char *worker_exit_meaning(int code)
{
	switch (code) {
	case WK_USAGE: return "the worker refused its arguments (a bug: please report)";
	case WK_NO_TORCH: return "torch (or torchvision / transformers) is not importable by that Python";
	case WK_NO_GPU: return "torch sees no CUDA device";
	case WK_OOM: return "out of device memory";
	default: return "the worker failed (its messages are above)";
	}
}

/* Run argv with extra environment (NAME=VALUE strings, NULL-terminated);
 * stdout to out_fd when >= 0.  *status: exit code, or 128 + signal; -1
 * when it could not start.  Kill it after timeout_s (0: never). */
static int run_child(char *const argv[], const char *const *envs, int out_fd, long timeout_s, int *status)
{
	time_t t0 = time(NULL);
	pid_t pid = fork();
	int ws;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (int i = 0; envs && envs[i]; i++)
			putenv((char *)envs[i]);
		if (out_fd >= 0)
			dup2(out_fd, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "hetbatch: error: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	for (;;) {
		pid_t r = waitpid(pid, &ws, timeout_s > 0 ? WNOHANG : 0);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (hb_interrupted() || (timeout_s > 0 && time(NULL) - t0 >= timeout_s)) {
			kill(pid, SIGTERM);
			sleep(2);
			kill(pid, SIGKILL);
			waitpid(pid, &ws, 0);
			*status = hb_interrupted() ? 128 + SIGINT : 124; /* 124: as timeout(1) */
			return 0;
		}
		if (r == 0)
			usleep(200000);
	}
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
	return 0;
}

/* `worker --check`: the device and versions as JSON. */
static int preflight(const struct torch_opts *o, cJSON **info, struct hb_error *err)
{
	char tmpl[] = "/tmp/hetbatch-check-XXXXXX";
	int fd = mkstemp(tmpl), status = -1;
	char *argv[] = { (char *)o->python, (char *)o->worker, "--check", NULL };
	char *text = NULL;
	size_t len = 0;

	if (fd < 0)
		return hb_runtime_error(err, "cannot create a temporary file: %s", strerror(errno));
	if (run_child(argv, NULL, fd, 120, &status) < 0 || status == 127) {
		close(fd);
		unlink(tmpl);
		return hb_runtime_error(err, "cannot run '%s' (--python PATH or $HETBATCH_PYTHON names the Python "
					"with torch)", o->python);
	}
	close(fd);
	if (status != 0) {
		unlink(tmpl);
		return hb_runtime_error(err, "%s %s --check: exit %d: %s", o->python, o->worker, status,
					worker_exit_meaning(status));
	}
	if (hb_read_file(tmpl, &text, &len, err) < 0) {
		unlink(tmpl);
		return -1;
	}
	unlink(tmpl);
	*info = hb_json_parse(text, len, "torch_worker.py --check", err);
	free(text);
	return *info ? 0 : -1;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* One point's files into a compute row: 1 stored, 0 skipped (OOM), -1 error. */
static int take_point(const char *dir, const char *model, int b, int n, const char *gpu,
		      struct hb_profdb *db, int64_t *run_id, struct hb_run_info *run, struct hb_error *err)
{
	char base[PATH_MAX], jpath[PATH_MAX + 8], kpath[PATH_MAX + 8];
	struct hb_ktrace t = { 0 };
	struct hb_kt_result r = { 0 };
	struct hb_compute_row row;
	cJSON *res;
	double mem = 0;
	int rc = -1;

	snprintf(base, sizeof(base), "%s/%s-b%d-v%d", dir, model, b, n);
	snprintf(jpath, sizeof(jpath), "%s.json", base);
	snprintf(kpath, sizeof(kpath), "%s.ktrace", base);
	res = hb_json_load_file(jpath, err);
	if (!res) {
		hb_error_prefix(err, "point %s b%d v%d: the worker wrote no result", model, b, n);
		return -1;
	}
	if (strcmp(jstr(res, "status"), "oom") == 0) {
		printf("  %6d %4d  out of device memory: not stored\n", b, n);
		cJSON_Delete(res);
		return 0;
	}
	if (strcmp(jstr(res, "status"), "ok") != 0) {
		hb_input_error(err, "%s: status '%s', expected ok or oom", jpath, jstr(res, "status"));
		goto out;
	}
	if (hb_json_num_opt(res, "peak_mem_bytes", jpath, 0, 1e15, 0, &mem, err) < 0)
		goto out;
	if (hb_ktrace_read(kpath, &t, err) < 0 || hb_ktrace_attribute(&t, NULL, &r, err) < 0)
		goto out;
	if (*run_id == 0) {
		snprintf(run->cupti, sizeof(run->cupti), "%ld", t.cupti_version);
		if (hb_profdb_add_run(db, run, run_id, err) < 0)
			goto out;
	}
	memset(&row, 0, sizeof(row));
	hb_strlcpy(row.gpu, gpu, sizeof(row.gpu));
	hb_strlcpy(row.model, model, sizeof(row.model));
	row.local_bs = b;
	row.n_vsw = n;
	hb_kt_compute_times(&r, &row);
	row.mem_bytes = mem;
	hb_strlcpy(row.source, "torch", sizeof(row.source));
	row.run_id = *run_id;
	if (hb_profdb_begin(db, err) < 0)
		goto out;
	if (hb_profdb_put_compute(db, &row, err) < 0) {
		hb_profdb_rollback(db);
		goto out;
	}
	if (hb_profdb_commit(db, err) < 0)
		goto out;
	printf("  %6d %4d %9.3f %9.3f %9.3f %9.3f %9.3f %10.3f %9.1f %8ld %6ld %6ld\n", b, n, 1e3 * row.data_s,
	       1e3 * row.fwd_s, 1e3 * row.bwd_s, 1e3 * row.update_s, 1e3 * row.copy_s, 1e3 * row.total_s,
	       mem / 1048576.0, r.attributed, r.by_stream, r.unattributed + r.unmatched);
	rc = 1;
out:
	hb_kt_result_free(&r);
	hb_ktrace_free(&t);
	cJSON_Delete(res);
	return rc;
}

int hb_cmd_profile_torch(int argc, char **argv, struct hb_cli *cli)
{
	enum { OPT_BACKEND = 256, OPT_MODELS, OPT_LBS, OPT_VSW, OPT_WARMUP, OPT_ITERS, OPT_PREC, OPT_SCALE,
	       OPT_GPUNAME, OPT_TRACEDIR, OPT_TIMEOUT, OPT_PYTHON, OPT_WORKER, OPT_INJECT, OPT_DB };
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "models", required_argument, NULL, OPT_MODELS },
		{ "local-bs", required_argument, NULL, OPT_LBS },
		{ "vsw", required_argument, NULL, OPT_VSW },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "precision", required_argument, NULL, OPT_PREC },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "gpu-name", required_argument, NULL, OPT_GPUNAME },
		{ "trace-dir", required_argument, NULL, OPT_TRACEDIR },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "worker", required_argument, NULL, OPT_WORKER },
		{ "inject", required_argument, NULL, OPT_INJECT },
		{ "db", required_argument, NULL, OPT_DB },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const known[] = { "resnet50", "vit", "gnmt", "bert-large", "gpt3-xl", "llama2-7b", NULL };
	struct torch_opts o = { .warmup = 5, .iters = 20, .precision = "fp32", .scale = 1 };
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	struct hb_profdb *db = NULL;
	struct hb_run_info run;
	const struct hb_gpu *g;
	char wbuf[PATH_MAX], ibuf[PATH_MAX], user_db[4096], dirbuf[PATH_MAX];
	cJSON *info = NULL;
	int64_t run_id = 0;
	long stored = 0, oom = 0, failed = 0, v;
	int c, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_BACKEND: break;   /* torch: how we got here */
		case OPT_MODELS:
			if ((o.nmodels = hb_split_list(optarg, o.models, MAX_NAMES)) < 0)
				return hb_cli_usage(cli, "profile", "--models: a comma-separated list, no empty items");
			break;
		case OPT_LBS:
			if ((o.nlbs = parse_int_list(optarg, o.lbs, MAX_LIST, 1, 1 << 20)) < 0)
				return hb_cli_usage(cli, "profile", "--local-bs: at most %d positive integers", MAX_LIST);
			break;
		case OPT_VSW:
			if ((o.nvsw = parse_int_list(optarg, o.vsw, MAX_LIST, 1, 64)) < 0)
				return hb_cli_usage(cli, "profile", "--vsw: at most %d integers in 1..64", MAX_LIST);
			break;
		case OPT_WARMUP:
			if (hb_parse_long_range(optarg, 0, 100000, &v) < 0)
				return hb_cli_usage(cli, "profile", "--warmup '%s': an integer in 0..100000", optarg);
			o.warmup = (int)v;
			break;
		case OPT_ITERS:
			if (hb_parse_long_range(optarg, 1, 1000000, &v) < 0)
				return hb_cli_usage(cli, "profile", "--iters '%s': an integer in 1..1000000", optarg);
			o.iters = (int)v;
			break;
		case OPT_PREC:
			if (strcmp(optarg, "fp32") && strcmp(optarg, "amp-bf16") && strcmp(optarg, "bf16"))
				return hb_cli_usage(cli, "profile", "--precision '%s': fp32, amp-bf16 or bf16", optarg);
			o.precision = optarg;
			break;
		case OPT_SCALE:
			if (hb_parse_double(optarg, &o.scale) < 0 || !(o.scale > 0 && o.scale <= 1))
				return hb_cli_usage(cli, "profile", "--scale '%s': a number in (0, 1]", optarg);
			break;
		case OPT_GPUNAME: o.gpu_name = optarg; break;
		case OPT_TRACEDIR: o.trace_dir = optarg; break;
		case OPT_TIMEOUT:
			if (hb_parse_long_range(optarg, 1, 86400 * 7, &o.timeout_s) < 0)
				return hb_cli_usage(cli, "profile", "--timeout '%s': seconds, 1..604800", optarg);
			break;
		case OPT_PYTHON: o.python = optarg; break;
		case OPT_WORKER: o.worker = optarg; break;
		case OPT_INJECT: o.inject = optarg; break;
		case OPT_DB: o.db = optarg; break;
		default:
			return hb_cli_bad_option(cli, "profile", argc, argv, opts);
		}
	}
	if (optind < argc)
		return hb_cli_usage(cli, "profile", "unexpected argument '%s'", argv[optind]);
	if (o.nmodels == 0)
		return hb_cli_usage(cli, "profile", "--backend torch needs --models (resnet50, vit, gnmt, bert-large, "
				    "gpt3-xl, llama2-7b)");
	for (int i = 0; i < o.nmodels; i++) {
		int ok = 0;

		for (int k = 0; known[k]; k++)
			ok |= strcmp(o.models[i], known[k]) == 0;
		if (!ok)
			return hb_cli_usage(cli, "profile", "--models: the torch worker has no model '%s' (it has "
					    "resnet50, vit, gnmt, bert-large, gpt3-xl, llama2-7b)", o.models[i]);
	}
	if (!o.python)
		o.python = getenv("HETBATCH_PYTHON") && getenv("HETBATCH_PYTHON")[0] ? getenv("HETBATCH_PYTHON") :
			   "python3";
	o.worker = locate(o.worker, "HETBATCH_TORCH_WORKER", WORKER_NAME, HB_WORKER_INSTALL_PATH, wbuf, sizeof(wbuf));
	if (!o.worker)
		return hb_cli_fail(cli, (hb_runtime_error(&err, "the torch worker (%s) is neither beside this binary nor "
							 "at %s; give --worker PATH", WORKER_NAME,
							 HB_WORKER_INSTALL_PATH), &err));
	o.inject = locate(o.inject, "HETBATCH_INJECT", INJECT_NAME, HB_INJECT_INSTALL_PATH, ibuf, sizeof(ibuf));
	if (!o.inject)
		return hb_cli_fail(cli, (hb_runtime_error(&err, "%s", HB_HAVE_GPU ?
				"the CUPTI injection library (" INJECT_NAME ") is neither beside this binary nor "
				"installed; give --inject PATH" :
				"this hetbatch was built without the CUDA toolkit, so it has no CUPTI injection "
				"library (" INJECT_NAME "); rebuild with CUDA (meson -Dgpu=enabled) or give --inject "
				"PATH"), &err));
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		return hb_cli_fail(cli, &err);
	if (o.gpu_name && !hb_catalog_gpu(&cat, o.gpu_name)) {
		hb_catalog_free(&cat);
		return hb_cli_usage(cli, "profile", "--gpu-name: unknown GPU '%s' (see 'hetbatch catalog gpus')",
				    o.gpu_name);
	}
	if (preflight(&o, &info, &err) < 0)
		goto fail;
	g = hb_catalog_gpu(&cat, o.gpu_name ? o.gpu_name : jstr(info, "device"));
	if (!g) {
		hb_input_error(&err, "device '%s' is not a catalog GPU name or alias; give --gpu-name NAME",
			       jstr(info, "device"));
		goto fail;
	}
	if (!o.trace_dir) {
		const char *tmp = getenv("TMPDIR");

		snprintf(dirbuf, sizeof(dirbuf), "%s/hetbatch-torch-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
		if (!mkdtemp(dirbuf)) {
			hb_runtime_error(&err, "%s: cannot create: %s", dirbuf, strerror(errno));
			goto fail;
		}
		o.trace_dir = dirbuf;
	} else if (hb_mkdir_p(o.trace_dir, &err) < 0) {
		goto fail;
	}
	if (!o.db) {
		if (hb_user_profdb_for_writing(user_db, sizeof(user_db), &err) < 0)
			goto fail;
		o.db = user_db;
	}
	/* one measuring run per database at a time (profdb.h) */
	if (hb_profdb_open(o.db, 0, &db, &err) < 0 || hb_profdb_lock_measuring(db, &err) < 0)
		goto fail;
	memset(&run, 0, sizeof(run));
	hb_strlcpy(run.kind, "profile", sizeof(run.kind));
	hb_strlcpy(run.backend, "torch", sizeof(run.backend));
	hb_strlcpy(run.host, jstr(info, "host"), sizeof(run.host));
	hb_strlcpy(run.device, jstr(info, "device"), sizeof(run.device));
	hb_strlcpy(run.driver, jstr(info, "driver"), sizeof(run.driver));
	hb_strlcpy(run.cuda, jstr(info, "cuda"), sizeof(run.cuda));
	hb_strlcpy(run.gpu, g->name, sizeof(run.gpu));
	run.scale = o.scale;
	hb_utc_iso_now(run.started_at, sizeof(run.started_at));
	snprintf(run.notes, sizeof(run.notes), "torch %s, %s, warmup %d + %d iterations, real models by "
		 "torch_worker.py, traces in %s", jstr(info, "torch"), o.precision, o.warmup, o.iters, o.trace_dir);
	printf("device: %s (torch %s, CUDA %s, driver %s), stored as catalog GPU '%s'; traces in %s\n",
	       run.device, jstr(info, "torch"), run.cuda, run.driver, g->name, o.trace_dir);
	hb_interrupt_catch();
	for (int i = 0; i < o.nmodels && !hb_interrupted(); i++) {
		const struct hb_model *m = hb_catalog_model(&cat, o.models[i]);
		int lbs[MAX_LIST], nl = o.nlbs, vsw[MAX_LIST], nv = o.nvsw, status = 0;
		/* Every point "," B_L (<= 2^20: 7 digits) "x" VSWs (<= 64): <= 12 bytes,
		 * MAX_LIST x MAX_LIST of them (the parser's bounds, above). */
		char points[MAX_LIST * MAX_LIST * 12 + 1] = "", warm[16], iters[16], scale[32], out_env[PATH_MAX + 32],
		     inj_env[PATH_MAX + 32];
		char *wargv[24];
		const char *envs[3];
		int a = 0;
		size_t pl = 0;

		if (nl == 0) {
			int b0 = m && m->min_lbs > 0 ? (int)m->min_lbs : 1;

			lbs[0] = b0;
			lbs[1] = 2 * b0;
			lbs[2] = 4 * b0;
			nl = 3;
		} else {
			memcpy(lbs, o.lbs, sizeof(lbs));
		}
		if (nv == 0) {
			vsw[0] = 1;
			vsw[1] = 2;
			vsw[2] = 4;
			nv = 3;
		} else {
			memcpy(vsw, o.vsw, sizeof(vsw));
		}
		for (int x = 0; x < nl; x++)
			for (int y = 0; y < nv; y++)
				pl += (size_t)snprintf(points + pl, sizeof(points) - pl, "%s%dx%d", pl ? "," : "", lbs[x],
						       vsw[y]);
		snprintf(warm, sizeof(warm), "%d", o.warmup);
		snprintf(iters, sizeof(iters), "%d", o.iters);
		snprintf(scale, sizeof(scale), "%.17g", o.scale);
		wargv[a++] = (char *)o.python;
		wargv[a++] = (char *)o.worker;
		wargv[a++] = "--model";
		wargv[a++] = o.models[i];
		wargv[a++] = "--points";
		wargv[a++] = points;
		wargv[a++] = "--warmup";
		wargv[a++] = warm;
		wargv[a++] = "--iters";
		wargv[a++] = iters;
		wargv[a++] = "--precision";
		wargv[a++] = (char *)o.precision;
		if (o.scale < 1) {
			wargv[a++] = "--scale";
			wargv[a++] = scale;
		}
		wargv[a++] = "--out-dir";
		wargv[a++] = (char *)o.trace_dir;
		wargv[a] = NULL;
		{
			snprintf(inj_env, sizeof(inj_env), "CUDA_INJECTION64_PATH=%s", o.inject);
			snprintf(out_env, sizeof(out_env), "HETBATCH_TRACE_OUT=%s/%s-exit.ktrace", o.trace_dir,
				 o.models[i]);
			envs[0] = inj_env;
			envs[1] = out_env;
			envs[2] = NULL;
		}
		printf("\n%s: points %s\n", o.models[i], points);
		fflush(stdout);
		if (run_child(wargv, envs, -1, o.timeout_s, &status) < 0) {
			hb_runtime_error(&err, "cannot run the worker: %s", strerror(errno));
			goto fail;
		}
		if (status != WK_OK && status != WK_OOM) {
			fprintf(stderr, "hetbatch: error: profile: %s: the worker exited %d: %s\n", o.models[i], status,
				status == 124 ? "killed after --timeout" : worker_exit_meaning(status));
			failed++;
		}
		printf("  %6s %4s %9s %9s %9s %9s %9s %10s %9s %8s %6s %6s\n", "lbs", "vsw", "data_ms", "fwd_ms",
		       "bwd_ms", "upd_ms", "copy_ms", "iter_ms", "mem_MiB", "attrib", "bystr", "other");
		for (int x = 0; x < nl; x++)
			for (int y = 0; y < nv; y++) {
				int r = take_point(o.trace_dir, o.models[i], lbs[x], vsw[y], g->name, db, &run_id,
						   &run, &err);

				if (r < 0) {
					fprintf(stderr, "hetbatch: error: profile: %s: not stored: %s\n", o.models[i], err.msg);
					failed++;
				}
				stored += r > 0;
				oom += r == 0;
			}
	}
	printf("\n%s: run %lld (torch on %s as '%s', source torch): %ld compute rows, %ld points out of memory, "
	       "%ld failed; traces in %s\n", o.db, (long long)run_id, run.device, g->name, stored, oom, failed,
	       o.trace_dir);
	rc = failed || hb_interrupted() ? 1 : 0;
	goto out;
fail:
	rc = hb_cli_fail(cli, &err);
out:
	cJSON_Delete(info);
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return rc;
}
