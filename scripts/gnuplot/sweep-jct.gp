# sweep-jct.gp: mean job completion time against cluster capacity, one line
# per policy, for one load factor of a sweep.
#
# Written for `hetbatch sweep --plot`, which calls
#   cd DIR && gnuplot -e "dat='./sweep-load1.dat'; names='fifo tiresias ...'; ttl='...'; gpdir='...'; out='PREFIX'" sweep-jct.gp
# dat   sweep-load<L>.dat: one block per policy (blocks separated by two blank
#       lines), rows "usd_per_h gpus jct_mean_h cost_usd \"label\" jct_min_h
#       jct_max_h cost_min_usd cost_max_usd censored", clusters by capacity;
#       means, minima and maxima over the seeds that ran (the error bars span
#       the seeds' range; one seed draws none).  The JCT is over every job of
#       the sweep's job set; where censored > 0 some jobs did not finish there
#       (too large for the cluster, or still running at the end) and the
#       point, a lower bound, is circled.
# names the policies, one word per block, in block order
# ttl   the title (optional)
# gpdir the directory of palette.gp (optional: else this script's)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("names") || !exists("out")) {
	print "sweep-jct.gp: set dat, names and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""
if (!exists("gpdir")) {
	gpdir = "."
	do for [i=strlen(ARG0):2:-1] { if (gpdir eq "." && ARG0[i:i] eq "/") { gpdir = ARG0[1:i-1] } }
}
load gpdir."/palette.gp"

set title ttl
set xlabel "cluster capacity ($/h of all GPUs)"
set ylabel "mean job completion time, every job (h)"
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set grid xtics ytics lc rgb "#dddddd"
set key outside right top
set border 3
set tics nomirror

# Policies at one capacity are nudged apart (1 % of the x range each) so
# their error bars do not cover each other.
n = words(names)
stats dat using 1 nooutput
dx = (STATS_max > STATS_min ? STATS_max - STATS_min : STATS_max) * 0.01
nudge(i) = (i - (n + 1) / 2.0) * dx
# the censored marker's key entry only where some point has one
stats dat using 10 name "CENS" nooutput
cens_title = CENS_max > 0 ? "circled: jobs censored (a lower bound)" : ""

do for [ext in "png svg"] {
	if (ext eq "png") {
		set terminal pngcairo size 1000,560 font "sans,11" noenhanced
	} else {
		set terminal svg size 1000,560 font "sans,11" noenhanced background rgb "white"
	}
	set output out.".".ext
	plot for [i=1:n] dat index (i-1) using ($1 + nudge(i)):3:6:7 with yerrorlines lt i title word(names, i), \
	     for [i=1:n] dat index (i-1) using ($1 + nudge(i)):(column(10) > 0 ? $3 : NaN) \
	         with points pt 6 ps 2.4 lc rgb "#cc0000" notitle, \
	     dat index 0 using 1:(0):5 with labels offset 0,0.8 font "sans,9" textcolor rgb "#555555" notitle, \
	     NaN with lines lc rgb "white" title "bars: seeds' min..max", \
	     NaN with points pt 6 ps 1.6 lc rgb "#cc0000" title cens_title
	set output
}
