# trace-rho.gp: cumulative distribution of finish-time fairness rho (JCT on
# the shared cluster / JCT alone on a 1/J share, Pollux Fig. 7), one step
# line per policy (trace replay); rho = 1 is marked.
#
# Written for `hetbatch sim --trace --plot`, which calls
#   cd DIR && gnuplot -e "dat='./trace-rho.dat'; names='fifo tiresias ...'; ttl='...'; gpdir='...'; out='PREFIX'" trace-rho.gp
# dat   trace-rho.dat: one block per policy (blocks separated by two blank
#       lines), columns rho cdf
# names the policies, one word per block, in block order
# ttl   the title (optional)
# gpdir the directory of palette.gp (optional: else this script's)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("names") || !exists("out")) {
	print "trace-rho.gp: set dat, names and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""
if (!exists("gpdir")) {
	gpdir = "."
	do for [i=strlen(ARG0):2:-1] { if (gpdir eq "." && ARG0[i:i] eq "/") { gpdir = ARG0[1:i-1] } }
}
load gpdir."/palette.gp"

set title ttl
set xlabel "finish-time fairness rho"
set ylabel "fraction of jobs"
set logscale x
set yrange [0:1.02]
set grid xtics ytics mxtics lc rgb "#dddddd"
set key outside right top
set border 3
set tics nomirror
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "black"
# The line says what it means: left of it a job finished sooner than on its
# own 1/J share of the cluster, right of it later.
set label "rho = 1 (as fast as a 1/J share)" at 1, graph 0.04 left offset 0.5, 0 font "sans,9" textcolor rgb "black"

set terminal pngcairo size 1000,560 font "sans,11" noenhanced
set output out.".png"
plot for [i=1:words(names)] dat index (i-1) using 1:2 with steps lt i title word(names, i)
set terminal svg size 1000,560 font "sans,11" noenhanced background rgb "white"
set output out.".svg"
replot
set output
