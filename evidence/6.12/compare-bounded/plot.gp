set terminal pngcairo noenhanced size 1400,720 font ',9'
set output '/tmp/cmp612/plot.png'
set multiplot layout 2,1
set style data histograms; set style histogram clustered gap 1
set style fill solid 0.8 border -1; set logscale y; set yrange [1:*]
set ylabel '1 + invalidations / iteration'; set xtics rotate by -30 scale 0
set key top right; set grid ytics
set title 'power10-x4: global + local invalidation instructions per iteration (log scale)'
plot '< grep "^power10-x4 " /tmp/cmp612/plot.dat' using ($3 + 1):xtic(2) title 'base', '' using ($4 + 1) title 'patched'
set title 'power9-x4: global + local invalidation instructions per iteration (log scale)'
plot '< grep "^power9-x4 " /tmp/cmp612/plot.dat' using ($3 + 1):xtic(2) title 'base', '' using ($4 + 1) title 'patched'
unset multiplot
