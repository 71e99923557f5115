/*
 * philly.h: the Philly trace's machine list as a hetbatch cluster.
 *
 * cluster_machine_list is a CSV "machineId,number of GPUs,single GPU mem"
 * ("m31,8, 24GB").  Philly names no GPU model, only the memory; the catalog
 * type is chosen by memory (Jeon et al. ATC'19 describe 12 GB and 24 GB
 * GPUs; like the catalog's "philly" preset, and Hu et al. 2024, we take
 * 24 GB = Tesla P40 and 12 GB = the 12 GB Tesla P100 PCIe, whose compute the
 * catalog's "p100" entry describes).  Other sizes are an error naming the
 * line.  Machines with 0 GPUs are left out and counted.
 *
 * The result is a catalog document {"clusters": [{...}]} that
 * hb_catalog_load_json() reads: one group per machine, named by its
 * machineId (lower-cased), so the trace's attempt `detail.ip` names the node.
 * Links, storage and restart cost are the catalog's "philly" preset's.
 */
#ifndef HB_PHILLY_H
#define HB_PHILLY_H

#include <cjson/cJSON.h>

#include "catalog.h"
#include "error.h"

struct hb_philly_machines {
	long machines;          /* machines in the cluster */
	long gpus;              /* their GPUs */
	long skipped;           /* rows with 0 GPUs, left out */
	long gpus_12gb;         /* GPUs mapped from 12 GB (p100) */
	long gpus_24gb;         /* GPUs mapped from 24 GB (p40) */
};

/* Read path into *out (caller cJSON_Delete()s it); name is the cluster's
 * catalog name.  cat supplies the GPU types and the "philly" preset's links
 * (built-in defaults when it has none).  info may be NULL. */
int hb_philly_machines_to_cluster(const struct hb_catalog *cat, const char *path, const char *name, cJSON **out,
				  struct hb_philly_machines *info, struct hb_error *err);

#endif
