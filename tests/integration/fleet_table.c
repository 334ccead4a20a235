/* fleet_table: the metrics table of docs/cli.md, from the value rows
 * (values.def fleet column); it_docs checks that the doc has it as is. */
#include <stdio.h>

#include "export.h"
#include "rt/fields.h"

int main(void)
{
	puts("| OpenTelemetry | Prometheus | kind | unit | attribute | rt value |");
	puts("|---|---|---|---|---|---|");
	for (unsigned id = 0; id < RT_NV; id++) {
		const struct rt_value_info *v = rt_value_info(id);
		if (!v->fleet)
			continue;
		char prom[160];
		rt_prom_name(prom, sizeof(prom), v);
		const char *col = v->csv ? v->csv : v->xcsv ? v->xcsv : v->json;
		printf("| `%s` | `%s` | %s | `%s` | %s%s%s | `%s` |\n", v->fleet, prom,
		       v->fleet_sum ? "counter" : "gauge", v->fleet_unit,
		       v->fleet_attr ? v->fleet_attr : "", v->fleet_attr ? "=" : "",
		       v->fleet_attr ? v->fleet_attr_value : "", col);
	}
	return 0;
}
