# trace-util.gp: cluster utilisation over time (GPUs held / cluster GPUs,
# averaged over equal bins), one small panel per policy (trace replay).
# On a cluster of one GPU type each panel draws its policy in colour over
# the others in light grey, on shared axes, so eight or more policies stay
# readable (one plot with eight overlapping step lines did not).  On a
# heterogeneous cluster each panel is a stacked area by GPU type (one
# colour per type, the legend above the panels), which says which GPUs
# are held, not only how many; the other policies' totals stay as grey
# lines.
#
# Written for `hetbatch sim --trace --plot`, which calls
#   cd DIR && gnuplot -e "dat='./trace-util.dat'; names='fifo tiresias ...'; types='v100 p100'; gpus='16'; x0='420'; ttl='...'; gpdir='...'; out='PREFIX'" trace-util.gp
# dat   trace-util.dat: one block per policy (blocks separated by two blank
#       lines), columns t_h util_pct gpus, then GPUs held of each type in
#       `types` order (bin start, means over the bin; a last row closes the
#       final bin); t_h is in hours since the window start
# names the policies, one word per block, in block order
# types the GPU types of the per-type columns (optional; one or none: no
#       stacking)
# gpus  the cluster's GPUs (needed with two or more types)
# x0    the window start in hours of simulated time, for the x label
#       (optional; 0: the trace origin)
# ttl   the title (optional)
# gpdir the directory of palette.gp (optional: else this script's)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("names") || !exists("out")) {
	print "trace-util.gp: set dat, names and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""
if (!exists("types")) types = ""
if (!exists("x0")) x0 = "0"
if (!exists("gpdir")) {
	gpdir = "."
	do for [i=strlen(ARG0):2:-1] { if (gpdir eq "." && ARG0[i:i] eq "/") { gpdir = ARG0[1:i-1] } }
}
load gpdir."/palette.gp"

n = words(names)
nt = words(types)
stacked = nt > 1 && exists("gpus")
if (stacked) { G = real(gpus) }
stats dat using 1 nooutput
tmax = STATS_max
# The window starts at 0: the data are in hours since its start.
set xrange [0:tmax > 0 ? tmax : 1]
set yrange [0:105]
set ytics 0, 25, 100
set grid xtics ytics lc rgb "#e4e4e4"
set grid front
set border 3
set tics nomirror
unset key
xl = real(x0) > 0 ? sprintf("hours since the window start (at %.4g h)", real(x0)) \
                  : "hours since the trace origin"
# Percent of the cluster held by types 1..t of a row (the stack's top edge
# for type t).
cum(t) = (sum [s=1:t] column(3 + s)) * 100.0 / G

do for [ext in "png svg"] {
	H = 260 * hb_rows(n) + 90 + (stacked ? 40 : 0)
	if (ext eq "png") {
		set terminal pngcairo size 1200, H font "sans,10" noenhanced
	} else {
		set terminal svg size 1200, H font "sans,10" noenhanced background rgb "white"
	}
	set output out.".".ext
	# Fixed pixel bands for the two title lines, the legend and the x
	# labels, so the figure title never runs into the first panels' titles.
	top = 1.0 - (78.0 + (stacked ? 40 : 0)) / H
	set multiplot layout hb_rows(n), hb_cols(n) \
		title ttl."\n".(stacked ? "GPUs held by type, % of the cluster (grey lines: the other policies' totals)" \
		                        : "GPUs held, % of the cluster (grey: the other policies)") \
		margins 0.06, 0.98, 52.0 / H, top spacing 0.05, 60.0 / H
	do for [i=1:n] {
		set title word(names, i)
		set xlabel (i > n - hb_cols(n) ? xl : "")
		set ylabel ((i - 1) % hb_cols(n) == 0 ? "util %" : "")
		if (stacked) {
			# the legend of the types, once, in a band above the panels
			if (i == 1) {
				set key vertical maxrows 1 invert at screen 0.5, screen 1.0 - 40.0 / H center top samplen 2 width 2 noopaque nobox
			} else {
				unset key
			}
			# painter's order: the whole stack first, then each lower part
			# over it, so type t shows between cum(t - 1) and cum(t)
			plot for [t=nt:1:-1] dat index (i - 1) using 1:(cum(t)) with fillsteps fs solid 0.85 noborder \
			         lc rgb hb_colour[(t - 1) % 8 + 1] title (i == 1 ? word(types, t) : ""), \
			     for [j=1:n] dat index (j - 1) using 1:2 with steps lw 1 lc rgb (j == i ? "#222222" : hb_grey) notitle
		} else {
			plot for [j=1:n] dat index (j - 1) using 1:2 with steps lw 1 lc rgb hb_grey notitle, \
			     dat index (i - 1) using 1:2 with steps lt i lw 2 dt 1 notitle
		}
	}
	unset multiplot
	set output
}
