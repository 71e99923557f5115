/*
 * hetbatch.c: the C API of hetbatch.h over the subcommands of cli/.
 *
 * Each call builds the command line the executable would be given and
 * runs the subcommand's function (cmd_sim, cmd_plan, ...) in this process,
 * so embedding adds no second implementation of any command to keep in
 * step with the first.  What the command writes on stdout and stderr is
 * caught (api/capture.c) into the handle; its error line becomes the
 * handle's message.  The one process-wide state the commands touch
 * (stdio, getopt's optind, the interrupt flag, signal handlers) is why
 * calls take a mutex and why each call resets optind and the flag.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <sqlite3.h>

#include "hb_config.h"
#include "capture.h"   /* defines: hb_capture_begin, hb_capture_end */
#include "cli.h"       /* defines: cmd_catalog, cmd_plan, cmd_sim, cmd_sweep */
#include "db.h"
#include "hetbatch.h"
#include "interrupt.h" /* defines: hb_interrupt_reset */
#include "plugin.h"    /* defines: hb_plugin_add, hb_plugin_remove */

#define MAX_ARGS 256  /* a command line's words, options included */
#define ERROR_PREFIX "hetbatch: error: "

struct hetbatch {
	long seed;              /* --seed of the calls that follow */
	int code;               /* the last call's enum hb_code, HB_OK after a success */
	char msg[1024];         /* its error message, "" after a success */
	struct hb_capture cap;  /* what it printed on stdout and stderr */
	char *log;              /* its stderr without the error lines (malloc'd) */
};

/* The commands share stdio, optind and the interrupt flag: one at a time. */
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;

/* Set while this thread runs a call: a policy callback calling back into
 * the API would wait forever on call_lock, so such a call is refused. */
static _Thread_local int in_call;

/* Take call_lock, or refuse a call made from inside a running one. */
static int enter(hetbatch *h)
{
	if (in_call) {
		h->code = HB_EINPUT;
		snprintf(h->msg, sizeof(h->msg), "a hetbatch call cannot be made from inside a running call "
			 "(a policy's callback)");
		return -1;
	}
	pthread_mutex_lock(&call_lock);
	in_call = 1;
	return 0;
}

static void leave(void)
{
	in_call = 0;
	pthread_mutex_unlock(&call_lock);
}

hetbatch *hetbatch_open(void)
{
	hetbatch *h = calloc(1, sizeof(*h));

	if (h)
		h->seed = 1;
	return h;
}

void hetbatch_close(hetbatch *h)
{
	if (!h)
		return;
	hb_capture_free(&h->cap);
	free(h->log);
	free(h);
}

const char *hetbatch_version(void)
{
	return HB_VERSION;
}

int hetbatch_set_seed(hetbatch *h, long seed)
{
	if (seed < 0 || seed > 0x7fffffffL) {
		h->code = HB_EINPUT;
		snprintf(h->msg, sizeof(h->msg), "seed must be an integer in [0, 2147483647], got %ld", seed);
		return HETBATCH_ERR;
	}
	h->seed = seed;
	return HETBATCH_OK;
}

const char *hetbatch_errmsg(const hetbatch *h)
{
	return h->msg;
}

int hetbatch_errcode(const hetbatch *h)
{
	return h->code;
}

const char *hetbatch_output(const hetbatch *h)
{
	return h->cap.out ? h->cap.out : "";
}

size_t hetbatch_output_len(const hetbatch *h)
{
	return h->cap.out ? h->cap.out_len : 0;
}

const char *hetbatch_log(const hetbatch *h)
{
	return h->log ? h->log : "";
}

/* Split what the command printed on stderr: the first "hetbatch: error:"
 * line is the message (a usage error's "Try 'hetbatch CMD --help'." line
 * after it is dropped: a caller of the API has no --help to try), every
 * other line is the log. */
static void split_stderr(hetbatch *h)
{
	const char *p = h->cap.err ? h->cap.err : "";
	size_t n = strlen(p);
	char *log = malloc(n + 1);
	size_t len = 0;
	int after_error = 0;

	h->msg[0] = '\0';
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t line = nl ? (size_t)(nl - p) : strlen(p);

		if (strncmp(p, ERROR_PREFIX, strlen(ERROR_PREFIX)) == 0 && !h->msg[0]) {
			size_t k = line - strlen(ERROR_PREFIX);

			if (k >= sizeof(h->msg))
				k = sizeof(h->msg) - 1;
			memcpy(h->msg, p + strlen(ERROR_PREFIX), k);
			h->msg[k] = '\0';
			after_error = 1;
		} else if (after_error && strncmp(p, "Try 'hetbatch", 13) == 0) {
			after_error = 0;
		} else if (log) {
			memcpy(log + len, p, line);
			len += line;
			log[len++] = '\n';
		}
		p += line + (nl != NULL);
	}
	if (log)
		log[len] = '\0';
	free(h->log);
	h->log = log;
}

/* Run the subcommand argv[0] (argc words) as the executable would, with
 * the session's seed, quiet (no progress bars, no status lines). */
static int run(hetbatch *h, hb_cmd_fn *fn, int argc, char **argv)
{
	struct hb_cli cli = {
		.prog = "hetbatch",
		.log = { .level = HB_LOG_WARN },
		.seed = (uint64_t)h->seed,
		.seed_set = 1,
		.status = HB_STATUS_NEVER,
	};
	struct hb_signals saved;
	struct hb_error err = { 0 };
	int rc;

	if (enter(h) < 0)
		return HETBATCH_ERR;
	if (hb_capture_begin(&h->cap, &saved, &err) < 0) {
		leave();
		h->code = err.code;
		snprintf(h->msg, sizeof(h->msg), "%s", err.msg);
		return HETBATCH_ERR;
	}
	cli.log.out = stderr; /* the capture's */
	gsl_set_error_handler_off(); /* as main() does: GSL errors are returned, never abort */
	hb_interrupt_reset();
	optind = 0; /* glibc: a full re-initialisation of getopt for this command line */
	rc = fn(argc, argv, &cli);
	if (hb_interrupted() && !cli.interrupt_said)
		rc = hb_cli_interrupted(&cli, argv[0], "stopped; its temporaries were removed");
	hb_capture_end(&h->cap, &saved);
	hb_interrupt_reset();
	leave();

	split_stderr(h);
	if (rc == 0) {
		h->code = HB_OK;
		h->msg[0] = '\0';
		return HETBATCH_OK;
	}
	h->code = rc == 2 ? HB_EINPUT : rc >= 128 ? HB_EINTR : HB_ERUNTIME;
	if (!h->msg[0]) {
		/* an interrupted command prints "hetbatch CMD: interrupted by ..." */
		const char *line = h->log && h->log[0] ? h->log : "failed without a message";
		size_t k = strcspn(line, "\n");

		snprintf(h->msg, sizeof(h->msg), "%.*s", (int)(k < sizeof(h->msg) ? k : sizeof(h->msg) - 1), line);
	}
	return HETBATCH_ERR;
}

/* A command line: fixed words, then opts (NULL-terminated), into argv
 * (MAX_ARGS + 1 slots); -1 with the handle's message when too long. */
static int build(hetbatch *h, char **argv, const char *const *words, int nwords, const char *const *opts)
{
	int n = 0;

	for (int i = 0; i < nwords; i++)
		if (words[i])
			argv[n++] = (char *)words[i];
	for (int i = 0; opts && opts[i]; i++) {
		if (n >= MAX_ARGS) {
			h->code = HB_EINPUT;
			snprintf(h->msg, sizeof(h->msg), "%s: more than %d options", words[0], MAX_ARGS);
			return -1;
		}
		argv[n++] = (char *)opts[i];
	}
	argv[n] = NULL;
	return n;
}

/* A required string argument; -1 with the message when it is NULL or "". */
static int need(hetbatch *h, const char *cmd, const char *what, const char *val)
{
	if (val && val[0])
		return 0;
	h->code = HB_EINPUT;
	snprintf(h->msg, sizeof(h->msg), "%s: %s is required", cmd, what);
	return -1;
}

static int call(hetbatch *h, hb_cmd_fn *fn, const char *const *words, int nwords, const char *const *opts)
{
	char *argv[MAX_ARGS + 1];
	int argc = build(h, argv, words, nwords, opts);

	return argc < 0 ? HETBATCH_ERR : run(h, fn, argc, argv);
}

int hetbatch_catalog(hetbatch *h, const char *kind, const char *name)
{
	const char *words[] = { "catalog", kind, name, "--json" };

	if (need(h, "catalog", "the kind (gpus, models or clusters)", kind) < 0)
		return HETBATCH_ERR;
	return call(h, cmd_catalog, words, 4, NULL);
}

int hetbatch_plan(hetbatch *h, const char *cluster, const char *model, long gbs, const char *const *opts)
{
	char gbs_s[32];
	const char *words[] = { "plan", "--cluster", cluster, "--model", model, "--gbs", gbs_s, "--json" };

	if (need(h, "plan", "the cluster", cluster) < 0 || need(h, "plan", "the model", model) < 0)
		return HETBATCH_ERR;
	snprintf(gbs_s, sizeof(gbs_s), "%ld", gbs);
	return call(h, cmd_plan, words, 8, opts);
}

int hetbatch_sim_job(hetbatch *h, const char *cluster, const char *models, const char *policies, const char *out,
		     const char *const *opts)
{
	const char *words[] = { "sim", "--cluster", cluster, "--model", models, "--out", out,
				policies ? "--policy" : NULL, policies };

	if (need(h, "sim", "the cluster", cluster) < 0 || need(h, "sim", "the model", models) < 0 ||
	    need(h, "sim", "the output directory", out) < 0)
		return HETBATCH_ERR;
	return call(h, cmd_sim, words, 9, opts);
}

int hetbatch_sim_trace(hetbatch *h, const char *cluster, const char *trace, const char *policies, const char *out,
		       const char *const *opts)
{
	const char *words[] = { "sim", "--cluster", cluster, "--out", out, trace ? "--trace" : NULL, trace,
				policies ? "--policy" : NULL, policies };

	if (need(h, "sim", "the cluster", cluster) < 0 || need(h, "sim", "the output directory", out) < 0)
		return HETBATCH_ERR;
	return call(h, cmd_sim, words, 9, opts);
}

int hetbatch_sweep(hetbatch *h, const char *config, const char *out, const char *const *opts)
{
	const char *words[] = { "sweep", config, "--out", out };

	if (need(h, "sweep", "the config file", config) < 0 || need(h, "sweep", "the output directory", out) < 0)
		return HETBATCH_ERR;
	return call(h, cmd_sweep, words, 4, opts);
}

int hetbatch_command(hetbatch *h, const char *const *argv)
{
	const struct hb_cmd *c;

	if (need(h, "command", "a subcommand", argv ? argv[0] : NULL) < 0)
		return HETBATCH_ERR;
	/* the executable's own table (cli/commands.c); live starts MPI ranks
	 * and measures devices, which an embedding process is not for */
	if ((c = hb_cli_command(argv[0])) && strcmp(c->name, "live") != 0)
		return call(h, c->fn, argv, 1, argv + 1);
	h->code = HB_EINPUT;
	snprintf(h->msg, sizeof(h->msg), "%s subcommand '%s' (every one of `hetbatch --help` but live)",
		 c ? "not an embeddable" : "unknown", argv[0]);
	return HETBATCH_ERR;
}

/* results: not a command; read DIR/results.db's meta.format. */
int hetbatch_results(hetbatch *h, const char *dir)
{
	char path[4096];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct hb_error err = { 0 };
	int rc = HETBATCH_ERR;

	hb_capture_free(&h->cap);
	if (need(h, "results", "the directory", dir) < 0)
		return HETBATCH_ERR;
	if ((size_t)snprintf(path, sizeof(path), "%s/results.db", dir) >= sizeof(path)) {
		hb_input_error(&err, "%s: path too long", dir);
		goto done;
	}
	if (hb_db_open(path, HB_DB_READONLY, &db, &err) < 0) {
		hb_error_prefix(&err, "%s: not a hetbatch result set (no readable results.db): ", dir);
		err.code = HB_EINPUT;
		goto done;
	}
	if (hb_db_prepare(db, "SELECT value FROM meta WHERE key = 'format'", &st, &err) < 0) {
		hb_input_error(&err, "%s: results.db has no meta table: not a hetbatch result set", path);
		goto done;
	}
	if (sqlite3_step(st) != SQLITE_ROW || !sqlite3_column_text(st, 0)) {
		hb_input_error(&err, "%s: table meta has no 'format' row: not a hetbatch result set", path);
		goto done;
	}
	if (hb_capture_set_output(&h->cap, (const char *)sqlite3_column_text(st, 0), &err) < 0)
		goto done;
	rc = HETBATCH_OK;
done:
	sqlite3_finalize(st);
	if (db)
		hb_db_close(db);
	h->code = rc == HETBATCH_OK ? HB_OK : err.code;
	snprintf(h->msg, sizeof(h->msg), "%s", rc == HETBATCH_OK ? "" : err.msg);
	return rc;
}

int hetbatch_register_policies(hetbatch *h, const struct hb_plugin *pl, const char *origin)
{
	struct hb_error err = { 0 };
	int rc;

	hb_capture_free(&h->cap);
	if (enter(h) < 0)
		return HETBATCH_ERR;
	rc = hb_plugin_add(pl, origin, &err);
	leave();
	h->code = rc < 0 ? err.code : HB_OK;
	snprintf(h->msg, sizeof(h->msg), "%s", rc < 0 ? err.msg : "");
	return rc < 0 ? HETBATCH_ERR : HETBATCH_OK;
}

int hetbatch_unregister_policies(hetbatch *h, const struct hb_plugin *pl)
{
	int rc;

	hb_capture_free(&h->cap);
	if (enter(h) < 0)
		return HETBATCH_ERR;
	rc = hb_plugin_remove(pl);
	leave();
	h->code = rc < 0 ? HB_EINPUT : HB_OK;
	snprintf(h->msg, sizeof(h->msg), "%s", rc < 0 ? "unregister: those policies were not registered by "
		 "hetbatch_register_policies" : "");
	return rc < 0 ? HETBATCH_ERR : HETBATCH_OK;
}
