/*
 * quickstart_fixture.h: the JABAS artifact's ResNet-50 quick-start profile
 * (4 x V100 node0 + 4 x P100 node1), built by hand from notes/jabas.md §2.3
 * and §2.4 (ms values to two decimals as the notes and the profile files
 * give them), for perfmodel and iidp tests that must not depend on the
 * importer.
 */
#ifndef HB_TEST_QUICKSTART_FIXTURE_H
#define HB_TEST_QUICKSTART_FIXTURE_H

#include "perfmodel.h"

#define QS_V100 0   /* gpu and node index of the V100s */
#define QS_P100 1   /* gpu and node index of the P100s */

/* Fill and prepare p (sync: enum hb_sync); 0 on success. */
int qs_build(struct hb_perf *p, int sync, struct hb_error *err);

#endif
