/* fleet_table: the metrics table of docs/cli.md, from the value rows
 * (values.def fleet column); it_docs checks that the doc has it as is.
 * With --grafana: docs/grafana-dashboard.json, a Grafana dashboard with a
 * panel per metric the rows send (it_docs keeps the committed copy equal
 * to this; it_prometheus checks its metrics against what Prometheus got). */
#include <stdio.h>
#include <string.h>

#include "export.h"
#include "rt/fields.h"

static void table(void)
{
	puts("| OpenTelemetry | Prometheus | kind | unit | attribute | rt value |");
	puts("|---|---|---|---|---|---|");
	for (unsigned id = 0; id < RT_NV; id++) {
		const struct rt_value_info *v = rt_value_info(id);
		if (!v->fleet)
			continue;
		char prom[160];
		rt_prom_name(prom, sizeof(prom), v);
		const char *col = v->csv    ? v->csv
		                  : v->xcsv ? v->xcsv
		                  : v->json ? v->json
		                            : "(sent only)";
		printf("| `%s` | `%s` | %s | `%s` | %s%s%s | `%s` |\n", v->fleet, prom,
		       v->fleet_sum ? "counter" : "gauge", v->fleet_unit,
		       v->fleet_attr ? v->fleet_attr : "", v->fleet_attr ? "=" : "",
		       v->fleet_attr ? v->fleet_attr_value : "", col);
	}
}

/* The Grafana unit of a row's OpenTelemetry unit (a counter: per second). */
static const char *unit(const struct rt_value_info *v)
{
	const char *u = v->fleet_unit;
	if (!strcmp(u, "By"))
		return v->fleet_sum ? "Bps" : "bytes";
	if (!strcmp(u, "s"))
		return v->fleet_sum ? "percentunit" : "s";
	if (!strcmp(u, "%"))
		return "percent";
	return "short";
}

/* A label name from an attribute (cpu.mode -> cpu_mode). */
static void label(char *out, size_t cap, const char *a)
{
	size_t n = 0;
	for (; a && *a && n + 1 < cap; a++)
		out[n++] = *a == '.' ? '_' : *a;
	out[n] = '\0';
}

static void grafana(void)
{
	puts("{");
	puts("  \"title\": \"rt: runs\",");
	puts("  \"uid\": \"rt-runs\",");
	puts("  \"description\": \"rt's runs as rt-export push sends them (made by "
	     "tests/integration/fleet_table.c --grafana from include/rt/values.def)\",");
	puts("  \"schemaVersion\": 39,");
	puts("  \"time\": {\"from\": \"now-6h\", \"to\": \"now\"},");
	puts("  \"templating\": {\"list\": [");
	puts(
	    "    {\"name\": \"datasource\", \"type\": \"datasource\", \"query\": \"prometheus\"},");
	puts("    {\"name\": \"job\", \"type\": \"query\", \"datasource\": {\"type\": "
	     "\"prometheus\", "
	     "\"uid\": \"${datasource}\"}, \"query\": \"label_values(system_cpu_logical_count, "
	     "job)\", \"multi\": true, \"includeAll\": true, \"refresh\": 2}");
	puts("  ]},");
	puts("  \"panels\": [");
	int n = 0;
	/* the job's cores: its CPU time over the host's, times the CPUs (a
	 * ratio of two counters with the same timestamps: exact whatever the
	 * window, where a rate over a window longer than a short run is not) */
	printf("    {\"type\": \"timeseries\", \"title\": \"CPU cores, job\", \"datasource\": "
	       "{\"type\": \"prometheus\", \"uid\": \"${datasource}\"}, \"gridPos\": {\"h\": 8, "
	       "\"w\": 12, \"x\": 0, \"y\": 0}, \"fieldConfig\": {\"defaults\": {\"unit\": "
	       "\"short\"}}, \"targets\": [{\"refId\": \"A\", \"expr\": \"sum by (rt_run_id) "
	       "(rate(process_cpu_time_seconds_total{job=~\\\"$job\\\"}[$__rate_interval])) / sum "
	       "by (rt_run_id) (rate(system_cpu_time_seconds_total{job=~\\\"$job\\\"}[$__rate_"
	       "interval])) * max by (rt_run_id) (system_cpu_logical_count{job=~\\\"$job\\\"})\", "
	       "\"legendFormat\": \"run {{rt_run_id}}\"}]}");
	n++;
	for (unsigned id = 0; id < RT_NV; id++) {
		const struct rt_value_info *v = rt_value_info(id);
		if (!v->fleet)
			continue;
		int seen = 0; /* one panel per metric: the first row with it */
		for (unsigned q = 0; q < id && !seen; q++)
			seen =
			    rt_value_info(q)->fleet && !strcmp(rt_value_info(q)->fleet, v->fleet);
		if (seen)
			continue;
		char prom[160], by[80] = "rt_run_id", lab[64] = "",
		                legend[96] = "run {{rt_run_id}}";
		rt_prom_name(prom, sizeof(prom), v);
		if (v->fleet_attr) {
			label(lab, sizeof(lab), v->fleet_attr);
			snprintf(by, sizeof(by), "rt_run_id, %s", lab);
			snprintf(legend, sizeof(legend), "run {{rt_run_id}} {{%s}}", lab);
		}
		char expr[512];
		if (v->fleet_sum)
			snprintf(expr, sizeof(expr),
			         "sum by (%s) (rate(%s{job=~\\\"$job\\\"}[$__rate_interval]))", by,
			         prom);
		else
			snprintf(expr, sizeof(expr), "max by (%s) (%s{job=~\\\"$job\\\"})", by,
			         prom);
		printf(
		    ",\n    {\"type\": \"timeseries\", \"title\": \"%s%s\", \"datasource\": "
		    "{\"type\": \"prometheus\", \"uid\": \"${datasource}\"}, \"gridPos\": {\"h\": "
		    "8, "
		    "\"w\": 12, \"x\": %d, \"y\": %d}, \"fieldConfig\": {\"defaults\": {\"unit\": "
		    "\"%s\"}}, \"targets\": [{\"refId\": \"A\", \"expr\": \"%s\", "
		    "\"legendFormat\": "
		    "\"%s\"}]}",
		    v->fleet, v->fleet_sum ? " (per second)" : "", n % 2 * 12, n / 2 * 8, unit(v),
		    expr, legend);
		n++;
	}
	puts("\n  ]");
	puts("}");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--grafana"))
		grafana();
	else
		table();
	return 0;
}
