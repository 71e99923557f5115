/*
 * import_priv.h: the Pollux-format table readers that import_pollux.c and
 * import_sia.c share (Sia's artifact keeps Pollux's file formats, one set
 * per GPU type).  Private to profiler/.
 *
 * Each reader opens one CSV, finds its columns by name (the published files
 * put them in different orders), validates every field and writes rows into
 * the open transaction of tab->db, counting distinct natural keys in
 * tab->stats.  Errors are HB_EINPUT "FILE:LINE: field 'NAME': value 'V':
 * reason"; the caller rolls the transaction back.
 */
#ifndef HB_IMPORT_PRIV_H
#define HB_IMPORT_PRIV_H

#include "error.h"
#include "import.h"
#include "profdb.h"

/* Where the rows of one (model, GPU) go and what they are tagged with. */
struct hb_import_tables {
	struct hb_profdb *db;
	struct hb_import_stats *stats;
	const char *source;            /* row source, e.g. "import:pollux" */
	char gpu[64];                  /* catalog (or file) name of the GPU */
	char model[64];                /* catalog (or directory) name of the model */
	/* Repeated scalability keys (num_nodes, num_replicas, local_bsz): 0 =
	 * the later row replaces the earlier (Pollux's files have none); 1 =
	 * store their mean, as Sia's simulator averages the points it
	 * interpolates over (ART applications.py:Application.get_throughput). */
	int scalability_mean;
	/* GPUs per node of the GPU's servers, 0 = unchecked: a placement digit
	 * or a scalability row needing more is an error. */
	int node_gpus;
};

/* placements CSV (placement, local_bsz, step_time, sync_time) -> placement
 * rows; placement "1" also gives a compute row (n_vsw 1, total_s = step). */
int hb_import_read_placements(struct hb_import_tables *tab, const char *path, struct hb_error *err);

/* scalability CSV (num_nodes, num_replicas, local_bsz, step_time,
 * sync_time) -> scalability rows. */
int hb_import_read_scalability(struct hb_import_tables *tab, const char *path, struct hb_error *err);

/* Every validation-<B>.csv in dir (progress, iteration, metric, grad_sqr,
 * grad_var) -> gradstats rows of batch B, epoch = 0-based data row.  *nfiles
 * = how many were read (0 is not an error). */
int hb_import_read_validations(struct hb_import_tables *tab, const char *dir, int *nfiles, struct hb_error *err);

/* Last path component of dir, ignoring trailing slashes. */
void hb_import_base_name(const char *dir, char *out, size_t size);

#endif
