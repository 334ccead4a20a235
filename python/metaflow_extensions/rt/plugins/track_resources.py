"""@track_resources: rt measures a Metaflow step (the reference's decorator,
backed by rt_tracker).

    from metaflow import FlowSpec, step, track_resources

    class MyFlow(FlowSpec):
        @track_resources(interval=0.5)
        @step
        def start(self):
            ...

Each task is tracked by one rt recorder (its process tree and the host),
in rt's own store, as a run named for Metaflow: job_name the flow,
stage_name the step, task_name the task's pathspec, orchestrator
"metaflow". At the task's end the decorator stores an artifact in the
reference's shape (default name `resource_tracker_data`): `step_failed`,
`tracker` (rt_tracker's snapshot: metadata, server_info, cloud_info,
process_metrics, system_metrics) and `historical_stats` (stats() of up to
five earlier successful runs of the step); beside them `rt`, the run's
place in rt's store and its report, which the `tracked_resources` card
shows. Nothing here measures or computes: rt's programs do, through
rt_tracker. A failure of the tracker never fails the step: the artifact
then holds `error`, as the reference's does.
"""
import json
import os
import time
import warnings
import traceback

from metaflow.decorators import StepDecorator

ARTIFACT = "resource_tracker_data"
HISTORY_RUNS = 5
#: the decorators that say what a step is given, combined as Metaflow
#: combines them: the larger of each
GIVING = ("resources", "kubernetes", "batch")


def _number(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def asked(decorators):
    """What the step asks for: cpu, memory (MiB: Metaflow's MB, as its
    platforms take them) and gpu of its @resources, @kubernetes and @batch,
    the larger of each; {} when it has none of them."""
    got = {}
    for d in decorators:
        if getattr(d, "name", None) not in GIVING:
            continue
        attrs = getattr(d, "attributes", None) or {}
        for k in ("cpu", "memory", "gpu"):
            v = _number(attrs.get(k))
            if v is not None and v > got.get(k, 0):
                got[k] = v
    return got


def request_of(got):
    """rt's --request for what the step asks for (None: nothing asked)."""
    parts = []
    if "cpu" in got:
        parts.append("cpu=" + ("%.3f" % got["cpu"]).rstrip("0").rstrip("."))
    if "memory" in got:
        parts.append("memory=%dMiB" % round(got["memory"]))
    if "gpu" in got:
        parts.append("gpu=%d" % round(got["gpu"]))
    return ",".join(parts) or None


def branches_of(flow):
    """How many tasks the step has in this run: the product of the foreach
    splits it is inside (0: not inside a foreach)."""
    n = 0
    for frame in getattr(flow, "_foreach_stack", None) or []:
        n = (n or 1) * int(getattr(frame, "num_splits", 0) or 0)
    return n


def _error(exc):
    return {"error_type": type(exc).__name__, "error_message": str(exc),
            "traceback": traceback.format_exc()}


class TrackResourcesDecorator(StepDecorator):
    """Track the resources a step uses with rt; store them as an artifact
    and show them in a card."""

    name = "track_resources"
    defaults = {"interval": 1.0, "artifact_name": ARTIFACT, "create_card": True}

    def step_init(self, flow, graph, step_name, decorators, environment, flow_datastore,
                  logger):
        self.logger = logger
        self.card_id = "resource_tracker_" + step_name
        if not self.attributes["create_card"]:
            return
        if any(getattr(d, "name", None) == "card" and
               (getattr(d, "attributes", None) or {}).get("id") == self.card_id
               for d in decorators):
            return
        from metaflow.plugins.cards.card_decorator import CardDecorator

        card = CardDecorator(attributes={
            "type": "tracked_resources", "id": self.card_id,
            "options": {"artifact_name": self.attributes["artifact_name"]}})
        card.external_init()
        decorators.append(card)  # its step_init runs next, in this same loop

    def task_pre_step(self, step_name, task_datastore, metadata, run_id, task_id, flow, graph,
                      retry_count, max_user_code_retries, ubf_context, inputs):
        self.tracker, self.error, self.started = None, None, time.time()
        self.run_id = run_id
        self.asked = asked(graph[step_name].decorators)
        try:
            from rt_tracker import DEFAULT_STORE, ResourceTracker

            flow_name = flow.__class__.__name__
            self.tracker = ResourceTracker(
                pid=os.getpid(), interval=float(self.attributes["interval"]),
                store=DEFAULT_STORE, job_name=flow_name, request=request_of(self.asked),
                run_metadata={"stage_name": step_name, "orchestrator": "metaflow",
                              "task_name": "%s/%s/%s/%s" % (flow_name, run_id, step_name,
                                                            task_id),
                              "external_run_id": str(run_id)})
            self.tracker.start()
        except Exception as e:  # the step runs on, untracked
            self.error = _error(e)
            self._say("*WARNING* [@track_resources] rt could not start: %s / %s"
                      % (type(e).__name__, e))

    def task_post_step(self, step_name, flow, graph, retry_count, max_user_code_retries):
        self._store(flow, step_name, failed=False)

    def task_exception(self, exception, step_name, flow, graph, retry_count,
                       max_user_code_retries):
        self._store(flow, step_name, failed=True)

    def task_finished(self, step_name, flow, graph, is_task_ok, retry_count,
                      max_user_code_retries):
        """A failed task gets its card too (Metaflow renders cards of
        successful tasks only)."""
        if is_task_ok or not self.attributes["create_card"]:
            return
        try:
            for deco in graph[step_name].decorators:
                if (getattr(deco, "name", None) == "card" and
                        deco.attributes.get("id") == self.card_id and deco.card_creator):
                    deco.card_creator.create(
                        mode="render", final=True, card_uuid=deco._card_uuid,
                        user_set_card_id=deco._user_set_card_id,
                        runtime_card=deco._is_runtime_card,
                        decorator_attributes=deco.attributes, card_options=deco.card_options,
                        logger=self.logger)
                    break
        except Exception as e:
            self._say("*WARNING* [@track_resources] no card for the failed step: %s / %s"
                      % (type(e).__name__, e))

    # ---- the artifact ----------------------------------------------------

    def _say(self, line):
        log = getattr(self, "logger", None)
        if log:
            log(line, timestamp=False)

    def _store(self, flow, step_name, failed):
        name = self.attributes["artifact_name"]
        try:
            data = self._collect(flow, step_name, failed)
        except Exception as e:  # never the step's failure
            data = {"error": _error(e)}
            self._say("*WARNING* [@track_resources] no resource data: %s / %s"
                      % (type(e).__name__, e))
        setattr(flow, name, data)

    def _collect(self, flow, step_name, failed):
        t = self.tracker
        if t is not None:
            t.stop(exit_code=1 if failed else 0)
        if self.error is not None or t is None:
            return {"error": self.error or {"error_type": "RuntimeError",
                                            "error_message": "rt was not started",
                                            "traceback": "-"}}
        if t.n_samples == 0:
            took = time.time() - self.started
            why = ("rt's rt-recorder and rt-export were not found: install rt "
                   "(pip install rt-tracker builds them)" if t._proc is None else
                   "the step ran for %.2f s, too short for a sample every %g s"
                   % (took, t.interval))
            return {"error": {"error_type": "ValueError", "error_message": why,
                              "traceback": "-"}}
        t.server_info, t.cloud_info  # looked up now: the snapshot carries them
        run = t._resolve_run()
        branches = branches_of(flow)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # said below, once, in the step's log
            page = t.report(integration="Metaflow", status_failed=failed, servers=3,
                            branches=branches)
        rt = {"store": t.store, "run": run, "report_html": str(page),
              "asked": dict(self.asked, by="@resources") if self.asked else {}}
        if branches:
            rt["step"] = self._step_answer(t, flow, step_name, branches)
        if page.error:
            rt["report_error"] = page.error
            self._say("*WARNING* [@track_resources] no report for the card: %s" % page.error)
        return {
            "step_failed": failed,
            "tracker": t.snapshot(),
            "historical_stats": self._history(flow, step_name),
            "rt": rt,
        }

    def _step_answer(self, t, flow, step_name, branches):
        """The step's one line so far: the largest any of its branches in
        this run needs (rt-export recommend --external-run-id), with how
        many branches it covers."""
        out = t._export("recommend", "--job", flow.__class__.__name__, "--stage", step_name,
                        "--external-run-id", str(self.run_id), "--json")
        try:
            js = json.loads(out) if out else {}
        except ValueError:
            js = {}
        if not js:
            return {"branches": branches, "error": "rt-export recommend gave no answer"}
        b = js.get("branches") or {}
        return {"branches": branches, "recorded": b.get("count"), "running": b.get("running"),
                "all_ended": b.get("count") == branches and not b.get("running"),
                "recommendation": js.get("recommendation"),
                "line": (js.get("scheduler") or {}).get("line"),
                "cpu_from_run": b.get("cpu_from_run"),
                "memory_from_run": b.get("memory_from_run")}

    def _history(self, flow, step_name):
        """stats() of this step in up to five earlier successful runs of the
        flow, newest first, from their artifacts (the reference's)."""
        from metaflow import Flow
        from rt_tracker import ResourceTracker

        name = self.attributes["artifact_name"]
        out = []
        try:
            runs = [r for r in Flow(flow.__class__.__name__).runs()
                    if str(r.id) != str(self.run_id)]
        except Exception as e:
            self._say("*NOTE* [@track_resources] no history: %s" % e)
            return out
        runs.sort(key=lambda r: r.created_at, reverse=True)
        for r in runs:
            if len(out) >= HISTORY_RUNS:
                break
            try:
                if not r.successful:
                    continue
                data = getattr(next(iter(r[step_name].tasks())).data, name)
            except Exception:
                continue  # that run did not track this step
            if not isinstance(data, dict) or "tracker" not in data:
                continue  # tracked, but its tracker failed: nothing to read
            stats = self._read_snapshot(r, data["tracker"], ResourceTracker)
            if stats is not None:
                out.append(stats)
        return out

    def _read_snapshot(self, run, snap, tracker_class):
        """stats() of an earlier run's snapshot, rt's or the reference
        extension's; None, said in the step's log, when it cannot be read
        or holds no sample (never left out without a word)."""
        try:
            t = tracker_class.from_snapshot(snap)
            if t.n_samples == 0:
                raise ValueError("it holds no sample")
            return t.stats()
        except Exception as e:
            made = ((snap.get("metadata") or {}).get("resource_tracker") or {}) \
                if isinstance(snap, dict) else {}
            self._say("*NOTE* [@track_resources] run %s's resource data is left out of the "
                      "history: %s (%s%s)" % (run.id, e, "written by resource-tracker " if made
                                              else "", made.get("version", "")))
            return None
