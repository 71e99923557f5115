# palette.gp: the line styles every hetbatch figure uses, loaded by the
# other scripts (`load gpdir."/palette.gp"`).
#
# Colour-blind-safe: the Okabe-Ito colours (Okabe & Ito, "Color Universal
# Design", 2008) without its yellow (#f0e442, too faint on white, which
# gnuplot's default set uses as line 5), then Paul Tol's wine and a dark
# grey.  Lines 9-16 repeat the colours dashed, so up to 16 policies stay
# apart in colour or dash; markers differ per line as well, for grey-scale
# prints.
array hb_colour[8] = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#882255", "#444444"]
do for [i=1:16] {
	hb_c = hb_colour[(i - 1) % 8 + 1]
	hb_pt = (i - 1) % 8 + 4
	hb_dt = i <= 8 ? 1 : 2
	set linetype i lc rgb hb_c lw 2 pt hb_pt ps 1.2 dt hb_dt
}
# The grey of context lines (other policies behind a panel's own line).
hb_grey = "#c8c8c8"

# Small-multiple layout for n panels: columns and rows.
hb_cols(n) = n <= 3 ? n : (n <= 4 ? 2 : (n <= 6 ? 3 : 4))
hb_rows(n) = int((n + hb_cols(n) - 1) / hb_cols(n))
