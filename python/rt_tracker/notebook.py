"""rt in Jupyter and IPython.

    %load_ext rt_tracker

    %%track                  # or %%track -i 0.2 --name train
    ...                      # the cell: it and every process it starts

The cell runs as it would (its output, its last value, its errors), under
a tracker of the kernel's process tree: a multiprocessing pool or a
subprocess the cell starts is counted, and the kernel's own memory from
before the cell is not its peak (the tracker resets the high-water mark at
start, see docs/python.md). Under the cell: rt's answer line, the
recommendation and a small chart of the cell's CPU and memory. The tracker
stays in the namespace as `rt_last`, for its tables and report.

Nothing here measures or decides: the figures and the answer are rt's
(rt-export summary); this module lays them out as HTML.
"""
import html
import time

from .tracker import ResourceTracker

CHART_W, CHART_H = 360, 90


def _polyline(xs, ys, top, color):
    if not xs or top <= 0:
        return ""
    x0, span = xs[0], (xs[-1] - xs[0]) or 1.0
    pts = " ".join("%.1f,%.1f" % (4 + (x - x0) / span * (CHART_W - 8),
                                  CHART_H - 4 - (y or 0) / top * (CHART_H - 8))
                   for x, y in zip(xs, ys))
    return "<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>" % (color, pts)


def chart_svg(t):
    """A small chart of the tracked tree's CPU (cores) and memory (MiB,
    PSS) over the run, each on its own scale; "" without two samples."""
    pm = t.process_metrics
    if len(pm) < 2 or "timestamp" not in pm:
        return ""
    ts, cpu, mem = pm["timestamp"], pm["cpu_usage"], pm["memory_mib"]
    top_cpu = max(max(c or 0 for c in cpu), 1.0)
    top_mem = max(max(m or 0 for m in mem), 1.0)
    return ("<svg class='rt-chart' width='%d' height='%d' viewBox='0 0 %d %d' role='img'>"
            "<rect width='100%%' height='100%%' fill='#f8f9fb' stroke='#d0d4dc'/>%s%s</svg>"
            "<div style='font-size:11px;color:#555'><span style='color:#1f6fd1'>CPU</span> "
            "(top %.2f cores) &middot; <span style='color:#d1495b'>memory</span> "
            "(top %.0f MiB) &middot; %.1f s</div>"
            % (CHART_W, CHART_H, CHART_W, CHART_H,
               _polyline(ts, cpu, top_cpu, "#1f6fd1"), _polyline(ts, mem, top_mem, "#d1495b"),
               top_cpu, top_mem, ts[-1] - ts[0]))


def answer_html(t, took=None):
    """rt's answer for a tracker's run as a block of HTML: its answer
    line, the recommendation (and why a value was raised), a small chart;
    or why there is none."""
    if getattr(t, "_frozen", None) is not None:
        return _snapshot_html(t)
    js = t.summary()[1] if t._resolve_run() is not None else {}
    if not js or not (js.get("run") or {}).get("samples"):
        why = ("rt's programs were not found (see docs/python.md)" if t._proc is None and
               t._resolve_run() is None else
               "it ran %.2f s, before the first full interval (%g s): try %%%%track -i %g"
               % (took or 0.0, t.interval, max(0.05, (took or t.interval) / 4)))
        return "<div class=rt-answer><b>rt</b>: nothing measured: %s</div>" % html.escape(why)
    rec = js.get("recommendation") or {}
    line = "%s vCPU%s, %s%s MiB memory%s" % (
        rec.get("cpu"), "" if rec.get("cpu") == 1 else "s",
        "at least " if rec.get("memory_at_least") else "", rec.get("memory_mib"),
        ", %s GPU%s" % (rec["gpu"], "" if rec["gpu"] == 1 else "s") if rec.get("gpu") else "")
    raised = rec.get("raised_because")
    return ("<div class=rt-answer style='font:13px system-ui,sans-serif'>"
            "<p style='margin:4px 0'><b>rt</b>: %s</p>"
            "<p style='margin:4px 0'>recommended: <b>%s</b>%s</p>%s</div>"
            % (html.escape(js.get("answer") or ""), html.escape(line),
               " (raised: %s)" % html.escape(raised) if raised else "", chart_svg(t)))


def _snapshot_html(t):
    """A tracker read from a snapshot: the answer rt stored in it."""
    if not t.n_samples:
        return "<div class=rt-answer><b>rt</b>: a snapshot with no sample</div>"
    rec = t.recommend_resources()
    return ("<div class=rt-answer style='font:13px system-ui,sans-serif'><p style='margin:4px 0'>"
            "<b>rt</b> (a snapshot): recommended <b>%s vCPU%s, %s MiB memory</b></p>%s</div>"
            % (rec.get("cpu"), "" if rec.get("cpu") == 1 else "s", rec.get("memory"),
               chart_svg(t)))


def _display(obj_html):
    from IPython.display import HTML, display

    display(HTML(obj_html))


def load(ip):
    """Register %%track on an IPython shell."""
    from IPython.core.magic import Magics, cell_magic, magics_class
    from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

    @magics_class
    class TrackMagics(Magics):
        @magic_arguments()
        @argument("-i", "--interval", type=float, default=0.5,
                  help="seconds between samples (default 0.5)")
        @argument("-n", "--name", default=None, help="the run's job name in rt's store")
        @cell_magic
        def track(self, line, cell):
            """Run the cell under rt's tracker; show rt's answer under it."""
            args = parse_argstring(self.track, line)
            t = ResourceTracker(interval=args.interval, job_name=args.name)
            start = time.time()
            t.start()
            ok = False
            try:
                ok = self.shell.run_cell(cell).success
            finally:
                t.stop(exit_code=0 if ok else 1)
                self.shell.user_ns["rt_last"] = t
                _display(answer_html(t, time.time() - start))

    ip.register_magics(TrackMagics)
