/*
 * summary_step.c - the step summary for $GITHUB_STEP_SUMMARY: the
 * Markdown summary followed by the run's CPU and memory over time as
 * Mermaid xychart-beta charts (at most 100 points each).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "answer/answer.h"
#include "answer/summary_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

/* The ticks Mermaid draws on a numeric axis from lo to hi: d3's linear
 * ticks for a count of 10 (a step of 1, 2 or 5 x 10^k; from 10 to 16 of
 * them, labels running into each other past 12). */
static int d3_ticks(double lo, double hi)
{
	double step = (hi - lo) / 10;
	if (!(step > 0))
		return 1;
	double power = floor(log10(step)), error = step / pow(10, power);
	double factor = error >= sqrt(50) ? 10 : error >= sqrt(10) ? 5 : error >= sqrt(2) ? 2 : 1;
	double inc = pow(10, power) * factor;
	double i1 = round(lo / inc), i2 = round(hi / inc);
	if (i1 * inc < lo)
		i1++;
	if (i2 * inc > hi)
		i2--;
	return (int)(i2 - i1 + 1);
}

/* One Mermaid xychart-beta of column id over the run (GitHub renders it),
 * at most 100 points: a bucket's mean (agg 0) or max (agg 1), each at its
 * last line's time. */
static void mermaid(FILE *f, const struct rt_answer *a, unsigned id, const char *title,
                    const char *unit, int agg)
{
	const struct rt_series *s = &a->series;
	int c = rt_stats_col(id);
	if (c < 0 || !s->n || !a->st.col[c].present)
		return;
	size_t per = (s->n + 99) / 100, nb = (s->n + per - 1) / per;
	double top = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!isnan(s->col[c][i]) && s->col[c][i] > top)
			top = s->col[c][i];
	/* a numeric x axis (a label per point ran together: "0.51.01.52.0..."):
	 * Mermaid spreads the points evenly from its start to its end, so it
	 * runs from the first point's time to the last's (or from 0 when that
	 * is the same to a point), in seconds, minutes past 5 minutes, hours
	 * past 5 hours, or the next unit when that gives at most 12 labels */
	double first = s->elapsed[per - 1 < s->n ? per - 1 : s->n - 1], end = s->elapsed[s->n - 1];
	static const char *const uname[] = {"seconds", "minutes", "hours"};
	static const double usec[] = {1, 60, 3600};
	int pref = end > 5 * 3600 ? 2 : end > 300 ? 1 : 0, u = pref, xp = 0;
	double lo = 0, hi = end;
	for (int k = 0; k < 6; k++) {
		int cand = (pref + k / 2) % 3;
		double l = (k % 2 ? first : 0) / usec[cand], h = end / usec[cand], span = h - l;
		int p = span < 0.1 ? 3 : span < 1 ? 2 : span < 10 ? 1 : 0;
		l = round(l * pow(10, p)) / pow(10, p); /* as printed */
		h = round(h * pow(10, p)) / pow(10, p);
		if (k == 0 || d3_ticks(l, h) <= 12) {
			u = cand, xp = p, lo = l, hi = h;
			if (d3_ticks(l, h) <= 12)
				break;
		}
	}
	/* an explicit theme: the line in a blue and the text in a grey that
	 * read on GitHub's light and dark backgrounds (the default theme drew
	 * the line in #ECECFF, nearly white); y from 0 */
	fprintf(f,
	        "\n```mermaid\n%%%%{init: {\"theme\": \"base\", \"themeVariables\": {\"xyChart\": "
	        "{\"backgroundColor\": \"transparent\", \"plotColorPalette\": \"#2f81f7\", "
	        "\"titleColor\": \"#8b949e\", \"xAxisLabelColor\": \"#8b949e\", "
	        "\"xAxisTitleColor\": \"#8b949e\", \"xAxisTickColor\": \"#8b949e\", "
	        "\"xAxisLineColor\": \"#8b949e\", \"yAxisLabelColor\": \"#8b949e\", "
	        "\"yAxisTitleColor\": \"#8b949e\", \"yAxisTickColor\": \"#8b949e\", "
	        "\"yAxisLineColor\": \"#8b949e\"}}}}%%%%\nxychart-beta\n  title \"%s\"\n"
	        "  x-axis \"%s\" %.*f --> %.*f\n  y-axis \"%s\" 0 --> %.*f\n  line [",
	        title, uname[u], xp, lo, xp, hi, unit, top < 10 ? 2 : 0, top > 0 ? top * 1.1 : 1);
	for (size_t b = 0; b < nb; b++) {
		double v = 0, w = 0, mx = 0;
		for (size_t i = b * per; i < s->n && i < (b + 1) * per; i++) {
			double x = s->col[c][i];
			if (isnan(x))
				continue;
			v += x;
			w += 1;
			if (x > mx || w == 1)
				mx = x;
		}
		fprintf(f, "%s%.2f", b ? ", " : "", agg ? mx : w > 0 ? v / w : 0);
	}
	fputs("]\n```\n", f);
}

void rt_print_step_summary(FILE *f, const struct rt_answer *a)
{
	rt_print_summary_markdown(f, a);
	int p = a->st.has_proc;
	mermaid(f, a, p ? RT_V_PROC_CORES : RT_V_CPU_UTIL, p ? "CPU cores, job" : "CPU cores, host",
	        "cores", 0);
	mermaid(f, a, p ? RT_V_PROC_PSS : RT_V_MEM_USED,
	        p ? "memory MiB, job (PSS)" : "memory MiB, host used", "MiB", 1);
	fputc('\n', f);
}
