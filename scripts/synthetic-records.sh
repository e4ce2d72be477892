#!/bin/sh
# Writes synthetic GameCraft-shaped records in hoh's record format to stdout:
# CONFIGS configurations x 8 arms x 140 tasks x REPS repetitions x 5 metrics
# (5,600 x CONFIGS x REPS rows), values and tokens from a fixed LCG so every
# run writes the same file. For measuring the analysis at scale, not results.
# Usage: scripts/synthetic-records.sh CONFIGS REPS > records.csv
set -eu
configs=${1:?usage: synthetic-records.sh CONFIGS REPS}
reps=${2:?usage: synthetic-records.sh CONFIGS REPS}
awk -v C="$configs" -v R="$reps" 'BEGIN {
	OFS = ","
	print "benchmark,config,condition,checkpoint,task,family,group,category,metric,value,tokens,rep,source"
	split("vanilla:1 hoh:1 hoh:2 hoh:3 vanilla-continuation:2 vanilla-continuation:3 wo-plan-update:3 wo-warm-start:3", arms, " ")
	split("Action Timing Strategy Simulation Adventure", groups, " ")
	split("mechanics depth visuals art", comps, " ")
	seed = 12345
	for (c = 1; c <= C; c++) for (a = 1; a <= 8; a++) for (t = 1; t <= 140; t++) for (r = 1; r <= R; r++) {
		split(arms[a], ac, ":")
		g = groups[(t - 1) % 5 + 1]
		fam = "fam" ((t - 1) % 28)
		seed = (seed * 1103515245 + 12345) % 2147483648
		tok = 100000 + seed % 9000000
		sum = 0
		for (m = 1; m <= 4; m++) {
			seed = (seed * 1103515245 + 12345) % 2147483648
			v[m] = (seed % 10001) / 100
		}
		overall = 0.15 * v[1] + 0.35 * v[2] + 0.15 * v[3] + 0.35 * v[4]
		key = "cfg" c
		print "gamecraft", key, ac[1], ac[2], "task-" t, fam, g, "", "overall", sprintf("%.2f", overall), tok, r, "synthetic"
		for (m = 1; m <= 4; m++)
			print "gamecraft", key, ac[1], ac[2], "task-" t, fam, g, "", comps[m], sprintf("%.2f", v[m]), tok, r, "synthetic"
	}
}'
