# sim-batch.gp: global batch B_G over time, one small panel per policy on
# shared axes, the panel's policy in colour over the others in light grey
# (on one plot, policies at the same batch hid each other's lines).
#
# Written for `hetbatch sim --plot`, which calls
#   cd DIR && gnuplot -e "dat='./M-series.dat'; names='jabas simigrad ...'; ttl='...'; gpdir='...'; out='PREFIX'" sim-batch.gp
# dat   <model>-series.dat: one block per policy (blocks separated by two blank
#       lines), columns t_h global_bs ngpus cost_usd progress_frac
# names the policies, one word per block, in block order
# ttl   the title (optional)
# gpdir the directory of palette.gp (optional: else this script's)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("names") || !exists("out")) {
	print "sim-batch.gp: set dat, names and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""
if (!exists("gpdir")) {
	gpdir = "."
	do for [i=strlen(ARG0):2:-1] { if (gpdir eq "." && ARG0[i:i] eq "/") { gpdir = ARG0[1:i-1] } }
}
load gpdir."/palette.gp"

n = words(names)
stats dat using 1:2 nooutput
set xrange [0:STATS_max_x > 0 ? STATS_max_x : 1]
set yrange [STATS_min_y / 1.2:STATS_max_y * 1.2]
set logscale y 2
set format y "%g"
set grid xtics ytics lc rgb "#e4e4e4"
set border 3
set tics nomirror
unset key

do for [ext in "png svg"] {
	if (ext eq "png") {
		set terminal pngcairo size 1200, 260 * hb_rows(n) + 90 font "sans,10" noenhanced
	} else {
		set terminal svg size 1200, 260 * hb_rows(n) + 90 font "sans,10" noenhanced background rgb "white"
	}
	set output out.".".ext
	set multiplot layout hb_rows(n), hb_cols(n) title ttl."\nglobal batch B_G, samples (grey: the other policies)" \
		margins 0.06, 0.98, 0.1, 0.86 spacing 0.05, 0.14
	do for [i=1:n] {
		set title word(names, i)
		set xlabel (i > n - hb_cols(n) ? "time (h)" : "")
		set ylabel ((i - 1) % hb_cols(n) == 0 ? "B_G" : "")
		plot for [j=1:n] dat index (j - 1) using 1:2 with steps lw 1 lc rgb hb_grey notitle, \
		     dat index (i - 1) using 1:2 with steps lt i lw 2 dt 1 notitle
	}
	unset multiplot
	set output
}
