/*
 * alibaba_openb.c: the pod list of Alibaba's 2023 GPU trace (format
 * alibaba-openb; alibaba/clusterdata cluster-trace-gpu-v2023/csv/
 * openb_pod_list_*.csv, Weng et al. ATC '23):
 *
 *   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
 *   openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497
 *
 * What a pod becomes (docs/jobspec.md, "Alibaba's GPU trace"):
 *   name       the pod's name
 *   arrival_s  creation_time: seconds after the trace's own origin (the
 *              trace starts at 0), so the stream is not wall-clock; the
 *              simulator does its own queueing, so scheduled_time is not
 *              the arrival
 *   gpus       num_gpu
 *   duration_s deletion_time - scheduled_time, the run time the trace saw:
 *              a hint, as for every trace (--duration-from-trace uses it);
 *              gpu_time_s = gpus x duration_s picks the model (below)
 *   status     pod_phase (Succeeded, Running, Failed), so --status
 *              Succeeded,Failed keeps only pods that ended
 *   vc         qos (LS, BE, Burstable, Guaranteed), so --vc LS keeps the
 *              latency-sensitive pods
 *   gpu_type   gpu_spec when it names one catalog GPU ("T4" -> t4, through
 *              the trace's GPU table, alibaba.h); a list of several
 *              ("V100M16|V100M32") leaves the choice to the policy, since a
 *              job spec holds one preferred type, not a set
 *   model      none: the replay assigns one by GPU-time class with --seed
 *              (hb_trace_assign_model, Pollux's workload construction)
 * Skipped and counted: CPU-only pods (num_gpu 0, HB_SKIP_NO_GPUS), pods
 * holding a share of one GPU (gpu_milli < 1000, HB_SKIP_GPU_SHARE:
 * hetbatch jobs hold whole GPUs, and a share is an inference or notebook
 * pod's, not a training job's; rounding them up would turn 3,078 of the
 * default list's 7,064 GPU pods into whole-GPU jobs) and pods never
 * scheduled (empty scheduled_time, the Pending ones,
 * HB_SKIP_NEVER_SCHEDULED).  Pods still Running at the snapshot are kept:
 * their deletion_time is the last time the trace saw them, so their run
 * time is a lower bound.  In the default list of 8,152 pods that leaves
 * 3,630 jobs.  cpu_milli and memory_mib are checked and not used.
 * Extra columns are ignored; the multigpu* variants, which lack the time
 * columns, are refused naming the first missing column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alibaba.h"
#include "csv.h"
#include "strutil.h"
#include "trace_priv.h"

enum { C_NAME, C_CPU, C_MEM, C_NGPU, C_MILLI, C_SPEC, C_QOS, C_PHASE, C_CREATE, C_DELETE, C_SCHED, C_N };

/* The latest time accepted, s: a century after the trace's origin. */
#define MAX_TIME_S 3.2e9

/* Kubernetes pod phases (the trace uses the first four). */
static const char *const phases[] = { "Succeeded", "Running", "Failed", "Pending", "Unknown" };

struct openb {
	struct hb_csv csv;
	int idx[C_N];
	struct hb_alibaba_gpus map;
};

static void close_openb(void *state)
{
	struct openb *p = state;

	hb_csv_close(&p->csv);
	free(p);
}

static int open_openb(const char *path, const struct hb_trace_options *opt, void **state, struct hb_error *err)
{
	static const char *const cols[] = { "name",      "cpu_milli",     "memory_mib",    "num_gpu",
					    "gpu_milli", "gpu_spec",      "qos",           "pod_phase",
					    "creation_time", "deletion_time", "scheduled_time", NULL };
	struct openb *p = calloc(1, sizeof(*p));

	(void)opt;
	*state = NULL;
	if (!p)
		return hb_runtime_error(err, "%s: out of memory", path);
	hb_alibaba_gpus_default(&p->map);
	if (hb_csv_open(&p->csv, path, err) < 0 || hb_csv_header(&p->csv, cols, p->idx, err) < 0) {
		close_openb(p);
		return -1;
	}
	*state = p;
	return 0;
}

static void where_openb(const void *state, char *buf, size_t size)
{
	const struct openb *p = state;

	snprintf(buf, size, "%s:%ld", p->csv.path, p->csv.line);
}

static size_t buffer_openb(const void *state)
{
	return ((const struct openb *)state)->csv.cap;
}


/* gpu_spec: "" or CODE[|CODE...]; *gpu = the one catalog GPU they all map
 * to, or "" when they name several (or none). */
static int parse_spec(const struct openb *p, const char *spec, const char *where, char *gpu, size_t size,
		      struct hb_error *err)
{
	char buf[256], *s, *tok, *save = NULL, msg[160];
	const char *one = NULL;
	int several = 0;

	gpu[0] = '\0';
	if (!spec[0])
		return 0;
	if (hb_strlcpy(buf, spec, sizeof(buf)) >= sizeof(buf))
		return hb_trace_bad_field(where, "gpu_spec", spec, "longer than 255 characters", err);
	s = buf;
	if (s[0] == '|' || s[strlen(s) - 1] == '|' || strstr(s, "||"))
		return hb_trace_bad_field(where, "gpu_spec", spec, "an empty GPU model in the '|' list", err);
	for (tok = strtok_r(s, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
		const char *g = hb_alibaba_gpu(&p->map, hb_trim(tok));

		if (!g) {
			snprintf(msg, sizeof(msg), "'%.40s' is not a GPU model of the trace (known: %s)", hb_trim(tok),
				 hb_alibaba_gpu_codes());
			return hb_trace_bad_field(where, "gpu_spec", spec, msg, err);
		}
		if (one && strcmp(one, g) != 0)
			several = 1;
		one = g;
	}
	if (!several && one)
		hb_strlcpy(gpu, one, size);
	return 0;
}

/* A time field: a non-negative number of seconds, or empty when `empty_ok`
 * (then *set = 0). */
static int time_field(struct hb_csv *c, int col, int empty_ok, double *out, int *set, struct hb_error *err)
{
	const char *v = hb_trim(c->field[col]);
	char where[1200];

	*set = 0;
	if (!v[0]) {
		if (empty_ok)
			return 0;
		snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
		return hb_input_error(err, "%s: field '%s': empty", where, c->header[col]);
	}
	if (hb_csv_double_range(c, col, 0.0, MAX_TIME_S, out, err) < 0)
		return -1;
	*set = 1;
	return 0;
}

static int next_openb(void *state, struct hb_jobspec *job, int *skip, struct hb_error *err)
{
	struct openb *p = state;
	struct hb_csv *c = &p->csv;
	char where[1200];
	const char *phase;
	long cpu, mem, ngpu, milli;
	double created, deleted, sched = 0;
	int have_c, have_d, have_s, k;
	int rc = hb_csv_next(c, err);

	if (rc <= 0)
		return rc;
	snprintf(where, sizeof(where), "%s:%ld", c->path, c->line);
	if (hb_csv_check_width(c, err) < 0 ||
	    hb_trace_copy(job->name, sizeof(job->name), hb_trim(c->field[p->idx[C_NAME]]), 1, where, "name", err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_CPU], 0, 100000000, &cpu, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_MEM], 0, 1L << 40, &mem, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_NGPU], 0, 1000000, &ngpu, err) < 0 ||
	    hb_csv_long_range(c, p->idx[C_MILLI], 0, 1000, &milli, err) < 0)
		return -1;
	if (ngpu == 0 && milli != 0)
		return hb_trace_bad_field(where, "gpu_milli", c->field[p->idx[C_MILLI]], "not 0 for a pod with num_gpu 0", err);
	if (ngpu > 0 && milli == 0)
		return hb_trace_bad_field(where, "gpu_milli", c->field[p->idx[C_MILLI]], "0 for a pod with GPUs (1000 is a whole GPU)",
			   err);
	if (ngpu > 1 && milli < 1000)
		return hb_trace_bad_field(where, "gpu_milli", c->field[p->idx[C_MILLI]],
			   "below 1000 for a pod with several GPUs (only a one-GPU pod may share its GPU)", err);
	if (parse_spec(p, hb_trim(c->field[p->idx[C_SPEC]]), where, job->gpu_type, sizeof(job->gpu_type), err) < 0 ||
	    hb_trace_copy(job->vc, sizeof(job->vc), hb_trim(c->field[p->idx[C_QOS]]), 1, where, "qos", err) < 0)
		return -1;
	phase = hb_trim(c->field[p->idx[C_PHASE]]);
	for (k = 0; k < (int)(sizeof(phases) / sizeof(phases[0])); k++)
		if (hb_strcaseeq(phase, phases[k]))
			break;
	if (k == (int)(sizeof(phases) / sizeof(phases[0])))
		return hb_trace_bad_field(where, "pod_phase", phase, "not a pod phase (Succeeded, Running, Failed, Pending, Unknown)", err);
	hb_strlcpy(job->status, phases[k], sizeof(job->status));
	if (time_field(c, p->idx[C_CREATE], 0, &created, &have_c, err) < 0 ||
	    time_field(c, p->idx[C_DELETE], 0, &deleted, &have_d, err) < 0 ||
	    time_field(c, p->idx[C_SCHED], 1, &sched, &have_s, err) < 0)
		return -1;
	if (deleted < created)
		return hb_trace_bad_field(where, "deletion_time", c->field[p->idx[C_DELETE]], "earlier than creation_time", err);
	if (have_s && sched < created)
		return hb_trace_bad_field(where, "scheduled_time", c->field[p->idx[C_SCHED]], "earlier than creation_time", err);
	if (have_s && sched > deleted)
		return hb_trace_bad_field(where, "scheduled_time", c->field[p->idx[C_SCHED]], "later than deletion_time", err);
	job->arrival_s = created;
	job->gpus = (int)ngpu;
	job->duration_s = have_s ? deleted - sched : 0.0;
	job->gpu_time_s = (double)ngpu * job->duration_s;
	job->record = c->line;
	if (ngpu == 0)
		*skip = HB_SKIP_NO_GPUS;
	else if (milli < 1000)
		*skip = HB_SKIP_GPU_SHARE;
	else if (!have_s)
		*skip = HB_SKIP_NEVER_SCHEDULED;
	else
		*skip = HB_SKIP_NONE;
	return 1;
}

const struct hb_trace_ops hb_trace_alibaba_openb_ops = {
	.open = open_openb,
	.next = next_openb,
	.where = where_openb,
	.buffer = buffer_openb,
	.close = close_openb,
	.wallclock = 0,
};
