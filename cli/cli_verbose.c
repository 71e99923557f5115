/*
 * cli_verbose.c: -v's decision summaries and written-file lists (cli_verbose.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_verbose.h"
#include "strutil.h"

#define MAX_KINDS 24 /* distinct event kinds counted per job; more are "other" */

/* Event kinds of one job in order of first appearance, with counts. */
struct kinds {
	char name[MAX_KINDS][16];
	long count[MAX_KINDS];
	int n;
	long other;
};

static void count_kind(struct kinds *k, const char *kind)
{
	for (int i = 0; i < k->n; i++)
		if (strcmp(k->name[i], kind) == 0) {
			k->count[i]++;
			return;
		}
	if (k->n == MAX_KINDS) {
		k->other++;
		return;
	}
	hb_strlcpy(k->name[k->n], kind, sizeof(k->name[k->n]));
	k->count[k->n++] = 1;
}

static const char *state_word(int state)
{
	switch (state) {
	case HB_JOB_DONE: return "done";
	case HB_JOB_DROPPED: return "dropped";
	case HB_JOB_SUSPENDED: return "suspended";
	case HB_JOB_RUNNING: return "running";
	case HB_JOB_RESTARTING: return "restarting";
	default: return "pending";
	}
}

/* One job from the run's kept records (single-job studies keep them). */
static void job_line(const struct hb_cli *cli, const char *what, const struct hb_sim *sim, const struct hb_sim_job *j)
{
	const struct hb_sim_sample *first = NULL, *last = NULL;
	long bmin = 0, bmax = 0;
	int gmin = 0, gmax = 0;
	struct kinds k = { .n = 0 };
	char counts[512] = "", when[64];
	size_t len = 0;

	for (size_t i = 0; i < sim->nsamples; i++) {
		const struct hb_sim_sample *s = &sim->samples[i];

		if (s->job != j->id || s->ngpus <= 0)
			continue;
		if (!first) {
			first = s;
			bmin = bmax = s->global_bs;
			gmin = gmax = s->ngpus;
		}
		last = s;
		bmin = s->global_bs < bmin ? s->global_bs : bmin;
		bmax = s->global_bs > bmax ? s->global_bs : bmax;
		gmin = s->ngpus < gmin ? s->ngpus : gmin;
		gmax = s->ngpus > gmax ? s->ngpus : gmax;
	}
	for (size_t i = 0; i < sim->nevents; i++)
		if (sim->events[i].job == j->id)
			count_kind(&k, sim->events[i].kind);
	for (int i = 0; i < k.n; i++)
		len += (size_t)snprintf(counts + len, len < sizeof(counts) ? sizeof(counts) - len : 0, "%s%s %ld",
					i ? ", " : "", k.name[i], k.count[i]);
	if (k.other)
		snprintf(counts + len, len < sizeof(counts) ? sizeof(counts) - len : 0, ", other %ld", k.other);
	if (j->state == HB_JOB_DONE)
		snprintf(when, sizeof(when), "done at %.3f h", j->finish_s / 3600.0);
	else
		snprintf(when, sizeof(when), "%s", state_word(j->state));
	if (!first) {
		hb_info(&cli->log, "%s: job %s never ran (%s); events: %s", what, j->name, when,
			counts[0] ? counts : "none");
		return;
	}
	hb_info(&cli->log,
		"%s: job %s: B_G %ld -> %ld (range %ld..%ld), GPUs %d -> %d (range %d..%d); %.0f iterations, "
		"%d %s, %ld in-place %s; %s; events: %s",
		what, j->name, first->global_bs, last->global_bs, bmin, bmax, first->ngpus, last->ngpus, gmin, gmax,
		j->iters, j->restarts, hb_plural(j->restarts, "restart", "restarts"), j->reconfigs,
		hb_plural(j->reconfigs, "change", "changes"), when, counts[0] ? counts : "none");
}

void hb_cli_log_decisions(const struct hb_cli *cli, const char *what, const struct hb_sim *sim)
{
	long by_state[6] = { 0 }, restarts = 0, preempt = 0, reconfigs = 0, adapts = 0;

	if (cli->log.level < HB_LOG_INFO || !sim)
		return;
	if (sim->njobs == 1 && !sim->streaming) {
		job_line(cli, what, sim, &sim->jobs[0]);
		return;
	}
	for (int i = 0; i < sim->njobs; i++) {
		const struct hb_sim_job *j = &sim->jobs[i];

		if (j->state >= 0 && j->state < 6)
			by_state[j->state]++;
		restarts += j->restarts;
		preempt += j->preemptions;
		reconfigs += j->reconfigs;
		adapts += j->adaptations;
	}
	hb_info(&cli->log,
		"%s: %d jobs: %ld done, %ld dropped, %ld unfinished; %ld restarts, %ld preemptions, %ld in-place "
		"changes, %ld adaptation points%s",
		what, sim->njobs, by_state[HB_JOB_DONE], by_state[HB_JOB_DROPPED],
		(long)sim->njobs - by_state[HB_JOB_DONE] - by_state[HB_JOB_DROPPED], restarts, preempt, reconfigs,
		adapts, cli->log.level < HB_LOG_DEBUG ? " (-vv: a line per job)" : "");
	for (int i = 0; cli->log.level >= HB_LOG_DEBUG && i < sim->njobs; i++) {
		const struct hb_sim_job *j = &sim->jobs[i];

		hb_debug(&cli->log,
			 "%s: job %s (%s): arrived %.3f h, %s, queued %.3f h; mean B_G %.0f on %.2f GPUs; %d restarts, "
			 "%d preemptions, %ld in-place changes, %ld adaptation points",
			 what, j->name, j->model->name, j->arrival_s / 3600.0, state_word(j->state),
			 j->started ? (j->start_s - j->arrival_s) / 3600.0 : 0.0,
			 j->run_s > 0 ? j->gbs_time_sum / j->run_s : 0.0, j->run_s > 0 ? j->gpus_time_sum / j->run_s : 0.0,
			 j->restarts, j->preemptions, j->reconfigs, j->adaptations);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void hb_cli_log_files(const struct hb_cli *cli, const char *cmd, const char *dir)
{
	char *names[256];
	int n = 0;
	struct dirent *e;
	DIR *d;

	if (cli->log.level < HB_LOG_INFO || !dir || !(d = opendir(dir)))
		return;
	while ((e = readdir(d)) && n < (int)(sizeof(names) / sizeof(names[0])))
		if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)))
			n++;
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			hb_info(&cli->log, "%s: wrote %s (%lld bytes)", cmd, path, (long long)st.st_size);
		free(names[i]);
	}
}
