#!/bin/sh
# Byte-identity check for speed work: the same simulations under two builds,
# every output compared byte for byte (issue "Philly scale": a change that
# promises the same decisions must show the same bytes).
#
#   scripts/bench/same-outputs.sh REF_BUILD NEW_BUILD [jabas|pollux|all] [JOBS]
#
# REF_BUILD and NEW_BUILD are build directories (e.g. a worktree of the
# commit before the change, built with scripts/build.sh).  Runs, under both:
#  - jabas: Pollux's workloads 1-4 on pollux-t4 (--restart-cost 30), the
#    first JOBS jobs (default 2000) of philly.csv on the philly preset, and
#    scripts/repro/jabas-fig10's table;
#  - pollux: workloads 1-2 and the same Philly prefix;
# each with --out (results.db compared by content, every table's and
# view's rows; the CSV and JSON files as they are) and the printed table
# without its timing columns
# (ms/round, wall(s)) and wall-time lines.  --threads 2, so the runs on
# threads are covered; the outputs are the same bytes for any count.
# Prints IDENTICAL and exits 0, or lists what differs and exits 1.
# Data: $HB_SHARED (default ../shared)/data/pollux.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
REF=$1
NEW=$2
WHAT=${3:-all}
JOBS=${4:-2000}
DATA=${HB_SHARED:-../shared}/data/pollux
case $WHAT in jabas|pollux|all) ;; *) echo "same-outputs: '$WHAT': expected jabas, pollux or all" >&2; exit 2 ;; esac
case $JOBS in ''|*[!0-9]*) echo "same-outputs: JOBS '$JOBS': expected a count of jobs" >&2; exit 2 ;; esac
for b in "$REF" "$NEW"; do
	[ -x "$b/cli/hetbatch" ] || { echo "same-outputs: $b/cli/hetbatch: no such program (build it first)" >&2; exit 2; }
done
[ -f "$DATA/philly.csv" ] || { echo "same-outputs: no $DATA/philly.csv (set HB_SHARED)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/hetbatch-same.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
head -n "$((JOBS + 1))" "$DATA/philly.csv" > "$TMP/prefix.csv"

# run SIDE BUILD NAME POLICY TRACE CLUSTER [ARGS...]
run() {
	side=$1 b=$2 n=$3 p=$4 t=$5 c=$6
	shift 6
	o="$TMP/$side/$n"
	mkdir -p "$TMP/$side"
	"$b/cli/hetbatch" -q sim --cluster "$c" --trace "$t" --policy "$p" --no-fairness --threads 2 \
		--out "$o" "$@" > "$o.table"
	# results.db by content, not layout (issue 43 changed how events are
	# stored, not what they say): every table and view's columns and rows,
	# in their scan order; `event`, `event_kind`, `event_tpl` and
	# `event_num` are seen through the view `events`.  events.csv and timeseries.csv (only with --csv since
	# then) hold those same rows, and the manifest names the files: both go.
	python3 - "$o/results.db" "$o/results.sql" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                   "AND name NOT LIKE 'sqlite_%' AND name NOT IN ('event', 'event_kind', "
                                   "'event_tpl', 'event_num') ORDER BY name")]
with open(sys.argv[2], "w") as f:
    for n in names:
        cur = con.execute('SELECT * FROM "%s"' % n)
        f.write("TABLE %s %s\n" % (n, [d[0] for d in cur.description]))
        for row in cur:
            f.write(repr(row) + "\n")
con.close()
PY
	rm -f "$o/results.db" "$o/events.csv" "$o/timeseries.csv" "$o/.hetbatch-set"
	# Timing columns blanked by their header names; wall-time lines dropped.
	awk '/wall time/ { next }
	     /^policy / { delete skip; for (i = 1; i <= NF; i++) if ($i == "wall(s)" || $i == "ms/round") skip[i] = 1 }
	     { for (i in skip) if (i <= NF) $i = "-"; print }' "$o.table" > "$o.table.cmp"
	rm -f "$o.table"
}

for side in ref new; do
	if [ "$side" = ref ]; then b=$REF; else b=$NEW; fi
	if [ "$WHAT" != pollux ]; then
		for w in 1 2 3 4; do
			run $side "$b" jabas-w$w jabas "$DATA/workloads/workload-$w.csv" pollux-t4 --restart-cost 30
		done
		run $side "$b" jabas-philly$JOBS jabas "$TMP/prefix.csv" philly
		sh scripts/repro/jabas-fig10 --build "$b" --out "$TMP/$side/fig10-out" 2>/dev/null |
			grep -v -i 'simulated in\|wall' > "$TMP/$side/fig10.table.cmp"
		rm -rf "$TMP/$side/fig10-out"
	fi
	if [ "$WHAT" != jabas ]; then
		for w in 1 2; do
			run $side "$b" pollux-w$w pollux "$DATA/workloads/workload-$w.csv" pollux-t4 --restart-cost 30
		done
		run $side "$b" pollux-philly$JOBS pollux "$TMP/prefix.csv" philly
	fi
done
if diff -r "$TMP/ref" "$TMP/new" > "$TMP/diff"; then
	echo "IDENTICAL ($WHAT, Philly's first $JOBS jobs)"
	exit 0
fi
echo "same-outputs: the builds differ:"
grep -E '^(diff|Only in|Files)' "$TMP/diff" | sed "s|$TMP/||g" | head -20
exit 1
