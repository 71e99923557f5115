# sim-batch.gp: global batch B_G over time, one step line per policy.
#
# Written for `hetbatch sim --plot`, which calls
#   gnuplot -e "dat='DIR/M-series.dat'; names='jabas simigrad ...'; ttl='...'; gpdir='...'; out='PREFIX'" sim-batch.gp
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

set title ttl
set xlabel "time (h)"
set ylabel "global batch B_G (samples)"
set logscale y 2
set format y "%g"
set xrange [0:*]
set grid xtics ytics lc rgb "#dddddd"
set key outside right top
set border 3
set tics nomirror

set terminal pngcairo size 1000,560 font "sans,11" noenhanced
set output out.".png"
plot for [i=1:words(names)] dat index (i-1) using 1:2 with steps lt i title word(names, i)
set terminal svg size 1000,560 font "sans,11" noenhanced background rgb "white"
set output out.".svg"
replot
set output
