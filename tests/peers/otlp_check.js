// otlp_check.js DIR... - every OTLP/HTTP JSON body in DIR (the bodies the
// test receiver kept) against the official schema: the OpenTelemetry
// JavaScript packages' generated protobuf types. fromObject, verify, an
// encode/decode round trip that must keep every field and value (a key
// the schema does not know would be dropped: caught here). Prints one
// JSON line per data point: metric, attributes, time, value, for the test.
'use strict';
const fs = require('fs');
const path = require('path');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const T = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;

// the JSON mapping leaves empty lists and default values out: compare
// without them
function norm(x) {
  if (Array.isArray(x)) return x.length ? x.map(norm) : undefined;
  if (x && typeof x === 'object') {
    const o = {};
    for (const k of Object.keys(x).sort()) {
      const v = norm(x[k]);
      if (v !== undefined && v !== false && v !== '' && v !== 0 && v !== '0') o[k] = v;
    }
    return Object.keys(o).length ? o : undefined;
  }
  return x;
}

let failed = 0;
for (const dir of process.argv.slice(2)) {
  for (const f of fs.readdirSync(dir).sort()) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    const obj = JSON.parse(text);
    const msg = T.fromObject(obj);
    const err = T.verify(msg);
    if (err) { console.error(`${f}: verify: ${err}`); failed = 1; continue; }
    const back = T.toObject(T.decode(T.encode(msg).finish()), { longs: String, enums: Number });
    const a = JSON.stringify(norm(obj)), b = JSON.stringify(norm(back));
    if (a !== b) {
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      console.error(`${f}: the round trip changed the body at ${i}: ${a.slice(i - 60, i + 60)} vs ${b.slice(i - 60, i + 60)}`);
      failed = 1;
      continue;
    }
    for (const rm of back.resourceMetrics) {
      const res = {};
      for (const kv of rm.resource.attributes) res[kv.key] = kv.value.stringValue;
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) {
        const kind = m.sum ? 'sum' : 'gauge';
        for (const p of m[kind].dataPoints) {
          const attrs = {};
          for (const kv of p.attributes || []) attrs[kv.key] = kv.value.stringValue;
          console.log(JSON.stringify({ file: f, resource: res, metric: m.name, unit: m.unit, kind,
            temporality: m.sum ? m.sum.aggregationTemporality : null,
            monotonic: m.sum ? !!m.sum.isMonotonic : null, attrs,
            start: p.startTimeUnixNano || null, time: p.timeUnixNano, value: p.asDouble,
            flags: p.flags || 0 }));
        }
      }
    }
  }
}
process.exit(failed);
