# sweep-cost.gp: total cost of the workload against cluster capacity, one line
# per policy, for one load factor of a sweep.
#
# Written for `hetbatch sweep --plot`, which calls
#   gnuplot -e "dat='DIR/sweep-load1.dat'; names='fifo tiresias ...'; ttl='...'; out='PREFIX'" sweep-cost.gp
# dat   sweep-load<L>.dat: one block per policy (blocks separated by two blank
#       lines), rows "usd_per_h gpus jct_mean_h cost_usd \"label\"", clusters
#       by capacity; means over the seeds that ran
# names the policies, one word per block, in block order
# ttl   the title (optional)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("names") || !exists("out")) {
	print "sweep-cost.gp: set dat, names and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""

set title ttl
set xlabel "cluster capacity ($/h of all GPUs)"
set ylabel "cost of the workload ($, GPUs held)"
set yrange [0:*]
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set grid xtics ytics lc rgb "#dddddd"
set key outside right top
set border 3
set tics nomirror

set terminal pngcairo size 1000,560 font "sans,11" noenhanced
set output out.".png"
plot for [i=1:words(names)] dat index (i-1) using 1:4 with linespoints lw 2 pt 7 dt i title word(names, i), \
     dat index 0 using 1:4:5 with labels offset 0,1.2 font "sans,9" textcolor rgb "#555555" notitle
set terminal svg size 1000,560 font "sans,11" noenhanced background rgb "white"
set output out.".svg"
replot
set output
