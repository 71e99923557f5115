# sim-bars.gp: time to target and cost per policy, normalised to a reference
# policy (JABAS when it ran), as clustered bars.
#
# Written for `hetbatch sim --plot`, which calls
#   cd DIR && gnuplot -e "dat='./M-bars.dat'; ref='jabas'; ttl='...'; gpdir='...'; out='PREFIX'" sim-bars.gp
# dat   <model>-bars.dat: rows "policy time_rel cost_rel time_h cost_usd"
# ref   the policy the bars are normalised to
# ttl   the title (optional)
# gpdir the directory of palette.gp (optional: else this script's)
# out   output path without extension: writes out.png (pngcairo) and out.svg
if (!exists("dat") || !exists("ref") || !exists("out")) {
	print "sim-bars.gp: set dat, ref and out with -e (see the header)"
	exit status 2
}
if (!exists("ttl")) ttl = ""
if (!exists("gpdir")) {
	gpdir = "."
	do for [i=strlen(ARG0):2:-1] { if (gpdir eq "." && ARG0[i:i] eq "/") { gpdir = ARG0[1:i-1] } }
}
load gpdir."/palette.gp"

set title ttl
set ylabel "relative to ".ref." (x)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.9
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
set key top left
set border 3
set tics nomirror
set xtics scale 0
stats dat using 2 nooutput
set xrange [-0.6:STATS_records - 0.4]

set terminal pngcairo size 1000,560 font "sans,11" noenhanced
set output out.".png"
plot dat using 2:xtic(1) title "time to target" lc rgb "#4477aa", \
     "" using 3 title "cost" lc rgb "#ee6677", \
     1 with lines dt 2 lc rgb "black" notitle
set terminal svg size 1000,560 font "sans,11" noenhanced background rgb "white"
set output out.".svg"
replot
set output
