/*
 * alibaba.h: Alibaba's 2023 heterogeneous GPU trace (alibaba/clusterdata,
 * cluster-trace-gpu-v2023; Weng et al., "Beware of Fragmentation", USENIX
 * ATC '23): its GPU model codes as catalog GPUs, and its node list as a
 * hetbatch cluster.  The pod list is a trace format (alibaba-openb,
 * alibaba_openb.c; docs/jobspec.md says what a pod becomes).
 *
 * GPU models.  The trace names seven: T4, P100, V100M16, V100M32, A10 and
 * the undisclosed internal codes G2 and G3 (its README: "G1, G2, G3 are
 * undisclosed internal GPU codes").  Each maps to one catalog GPU; G2 and
 * G3 are assumptions (alibaba_gpu.c says which and why) that a caller may
 * override with an alias list "G2=v100-32gb,G3=a100-80gb".
 *
 * Node list.  openb_node_list_gpu_node.csv (and openb_node_list_all_node
 * .csv) is a CSV "sn,cpu_milli,memory_mib,gpu,model" ("openb-node-0228,
 * 128000,786432,8,G3").  The result is a catalog document {"clusters":
 * [{...}]} that hb_catalog_load_json() reads: one group per node named by
 * its sn, the GPU type from its model.  Nodes with 0 GPUs (the all-node
 * list's CPU nodes, whose model is empty) are left out and counted.  The
 * trace gives no interconnect: links, storage and restart cost are
 * assumptions stated in the cluster's source (alibaba_nodes.c).
 */
#ifndef HB_ALIBABA_H
#define HB_ALIBABA_H

#include <cjson/cJSON.h>

#include "catalog.h"
#include "error.h"

/* The trace's GPU model codes, in the order the table lists them. */
#define HB_ALIBABA_NGPUS 7

/* Overrides of the code -> catalog GPU table; all "" = the defaults. */
struct hb_alibaba_gpus {
	char gpu[HB_ALIBABA_NGPUS][HB_NAME_MAX]; /* catalog GPU per code (table order) */
};

/* The default mapping into *map. */
void hb_alibaba_gpus_default(struct hb_alibaba_gpus *map);
/* Apply "CODE=GPU[,CODE=GPU...]" (codes case-insensitive) to *map; an
 * unknown code, a GPU the catalog lacks (cat may be NULL: not checked) or
 * a malformed item is an input error naming it and the known codes. */
int hb_alibaba_gpus_parse(struct hb_alibaba_gpus *map, const struct hb_catalog *cat, const char *list,
			  struct hb_error *err);
/* Catalog GPU of one code (case-insensitive, blanks trimmed by the caller),
 * or NULL when the code is not one of the seven. */
const char *hb_alibaba_gpu(const struct hb_alibaba_gpus *map, const char *code);
/* "T4, P100, V100M16, V100M32, A10, G2, G3" for messages. */
const char *hb_alibaba_gpu_codes(void);
/* Code i (0..HB_ALIBABA_NGPUS-1) of the table. */
const char *hb_alibaba_gpu_code(int i);

struct hb_alibaba_nodes {
	long nodes;                       /* nodes in the cluster */
	long gpus;                        /* their GPUs */
	long skipped;                     /* rows with 0 GPUs, left out */
	long gpus_by_code[HB_ALIBABA_NGPUS]; /* GPUs per trace code (table order) */
};

/* Read the node list at path into *out (caller cJSON_Delete()s it); name
 * is the cluster's catalog name, map the GPU mapping (NULL = defaults).
 * cat, when given, must hold every mapped GPU.  info may be NULL.  A
 * malformed row fails naming "FILE:LINE: field 'F': value 'V'". */
int hb_alibaba_nodes_to_cluster(const struct hb_catalog *cat, const char *path, const char *name,
				const struct hb_alibaba_gpus *map, cJSON **out, struct hb_alibaba_nodes *info,
				struct hb_error *err);

#endif
