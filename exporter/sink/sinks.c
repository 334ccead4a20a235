/*
 * sinks.c - the metrics sinks push --to names: their table (each entry in
 * its own file: push_prom.c, push_otlp.c). Apart from push_http.c, whose
 * helpers the entries name, so that no two files call round a circle.
 */
#include <string.h>

#include "export.h"
#include "sink/push.h"
#include "sink/push_int.h"

const struct rt_push_sink *const rt_push_sinks[] = {&rt_push_prometheus, &rt_push_otlp, NULL};

/* The sink push --to names, or NULL (said). */
const struct rt_push_sink *push_sink_named(const char *to)
{
	for (size_t i = 0; to && rt_push_sinks[i]; i++)
		if (!strcmp(to, rt_push_sinks[i]->name))
			return rt_push_sinks[i];
	rt_say("push --to must be prometheus or otlp (got '%s')", to ? to : "nothing");
	return NULL;
}
