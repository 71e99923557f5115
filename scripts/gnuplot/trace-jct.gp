# trace-jct.gp: cumulative distribution of job completion times, one step
# line per policy (trace replay).
#
# Written for `hetbatch sim --trace --plot`, which calls
#   cd DIR && gnuplot -e "dat='./trace-jct.dat'; names='fifo tiresias ...'; ttl='...'; gpdir='...'; out='PREFIX'" trace-jct.gp
# dat   trace-jct.dat: one block per policy (blocks separated by two blank
#       lines), columns jct_h cdf (sorted JCTs, fraction of jobs done by then)
# names the policies, one word per block, in block order
# ttl   the title (optional)
# gpdir the directory of palette.gp (optional: else this script's)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("names") || !exists("out")) {
	print "trace-jct.gp: set dat, names and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""
if (!exists("gpdir")) {
	gpdir = "."
	do for [i=strlen(ARG0):2:-1] { if (gpdir eq "." && ARG0[i:i] eq "/") { gpdir = ARG0[1:i-1] } }
}
load gpdir."/palette.gp"

set title ttl
set xlabel "job completion time (h)"
set ylabel "fraction of jobs"
set logscale x
set yrange [0:1.02]
set grid xtics ytics mxtics lc rgb "#dddddd"
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
