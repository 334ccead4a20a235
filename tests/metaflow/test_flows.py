"""@track_resources with Metaflow's local runtime and datastore: real flows
(tests/metaflow/flows), run by `python FLOW.py run`, read back with
Metaflow's client, against rt's store and the cards Metaflow made.

Run by tools/metaflow-tests.sh (a Metaflow checkout on PYTHONPATH, this
build's programs on PATH); skipped when metaflow cannot be imported."""
import json
import os
import shutil
import subprocess
import sys

import pytest

metaflow = pytest.importorskip("metaflow")

HERE = os.path.dirname(os.path.abspath(__file__))
FLOWS = os.path.join(HERE, "flows")
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A directory with the flows, Metaflow's local datastore and rt's store."""
    d = tmp_path_factory.mktemp("mf")
    for f in os.listdir(FLOWS):
        shutil.copy(os.path.join(FLOWS, f), d)
    old = os.getcwd()
    os.chdir(d)
    os.environ["RT_STORE"] = str(d / "store")
    os.environ.setdefault("USERNAME", "rt-test")
    yield d
    os.chdir(old)


def run_flow(work, name, *args, env=None, ok=True):
    p = subprocess.run([sys.executable, name, "--no-pylint", "run", *args], cwd=work,
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    if ok:
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return p


def export(*args):
    return subprocess.run(["rt-export", *args], capture_output=True, text=True,
                          timeout=120).stdout


def task_of(flow, step):
    from metaflow import Flow
    return next(iter(Flow(flow).latest_run[step].tasks()))


def cards_of(task):
    from metaflow.cards import get_cards
    return list(get_cards(task))


def rt_card(task):
    cards = [c for c in cards_of(task) if c.type == "tracked_resources"]
    assert len(cards) == 1, [c.type for c in cards_of(task)]
    return cards[0].get()


def browse(work, page, name):
    """The card in headless Chromium, as a person opens it: no request but
    the file itself, every chart drawn, no error (tests/browser)."""
    if not shutil.which(os.environ.get("CHROMIUM", "chromium")):
        return
    path = os.path.join(str(work), name + "-card.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    shot = os.environ.get("RT_CARD_SHOTS")
    args = ["node", os.path.join(ROOT, "tests", "browser", "check_report.js"), path]
    if shot:
        args.append(os.path.join(shot, name + "-card.png"))
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_minimal_step_gets_the_artifact_the_run_and_the_card(work):
    run_flow(work, "minimal_flow.py")
    task = task_of("MinimalFlow", "start")
    data = task.data.resource_tracker_data
    assert {"step_failed", "tracker", "historical_stats"} <= set(data), sorted(data)
    assert data["step_failed"] is False
    tr = data["tracker"]
    assert {"metadata", "server_info", "cloud_info", "process_metrics",
            "system_metrics"} <= set(tr), sorted(tr)
    assert tr["metadata"]["interval"] == 0.2, "the decorator's interval is honoured"
    pm = tr["process_metrics"]
    rows = pm if isinstance(pm, list) else [dict(zip(pm, v)) for v in zip(*pm.values())]
    assert max(r["memory_mib"] for r in rows) >= 150, "200 MiB touched, PSS"
    assert max(r["cpu_usage"] for r in rows) >= 0.6, "one core busy"
    # the task is a run in rt's store, named as Metaflow names it
    show = json.loads(export("show", str(data["rt"]["run"])))
    assert show["interval_secs"] == 0.2
    assert show["metadata"] == {
        "job_name": "MinimalFlow", "stage_name": "start", "orchestrator": "metaflow",
        "task_name": task.pathspec, "external_run_id": task.pathspec.split("/")[1]}
    page = rt_card(task)
    assert "rt report: run %d" % data["rt"]["run"] in page
    assert "@resources(cpu=1, memory=" in page
    assert "from <code>Metaflow</code>" in page
    browse(work, page, "minimal")


def test_history_builds_up_over_three_runs(work):
    run_flow(work, "minimal_flow.py")
    run_flow(work, "minimal_flow.py")
    task = task_of("MinimalFlow", "start")
    data = task.data.resource_tracker_data
    hist = data["historical_stats"]
    assert len(hist) == 2, hist
    assert all(h["process_memory_mib"]["max"] >= 150 for h in hist), hist
    assert "This run and the 2 before it (job MinimalFlow, step start)" in rt_card(task)
    assert "recommended" in export("recommend", "--job", "MinimalFlow")


def test_fork_pool_is_measured_as_the_steps_tree(work):
    run_flow(work, "pool_flow.py")
    pm = task_of("PoolFlow", "start").data.resource_tracker_data["tracker"]["process_metrics"]
    cpu = pm["cpu_usage"] if isinstance(pm, dict) else [r["cpu_usage"] for r in pm]
    assert max(cpu) >= 1.3, ("two workers busy: more than one process's worth", cpu)


def test_failed_step_gets_its_artifact_and_card(work):
    p = run_flow(work, "failing_flow.py", ok=False)
    assert p.returncode != 0
    task = task_of("FailingFlow", "start")
    data = task.data.resource_tracker_data
    assert data["step_failed"] is True
    page = rt_card(task)
    assert "Failed" in page
    browse(work, page, "failed")


def test_foreach_tasks_are_runs_of_their_own(work):
    run_flow(work, "foreach_flow.py")
    from metaflow import Flow
    tasks = list(Flow("ForeachFlow").latest_run["work"].tasks())
    assert len(tasks) == 3
    runs = {t.data.resource_tracker_data["rt"]["run"] for t in tasks}
    assert len(runs) == 3, "each task its own run, found among the others"
    names = {json.loads(export("show", str(r)))["metadata"]["task_name"] for r in runs}
    assert names == {t.pathspec for t in tasks}


def test_the_users_own_card_keeps_working(work):
    run_flow(work, "usercard_flow.py")
    types = sorted(c.type for c in cards_of(task_of("UserCardFlow", "start")))
    assert types == ["blank", "tracked_resources"], types


def test_a_tracker_that_cannot_run_never_fails_the_step(work, tmp_path):
    run_flow(work, "minimal_flow.py", env={"RT_PREFIX": str(tmp_path)})
    data = task_of("MinimalFlow", "start").data.resource_tracker_data
    assert "error" in data and "not found" in data["error"]["error_message"], data
    assert "not found" in rt_card(task_of("MinimalFlow", "start"))


def test_a_report_that_fails_reaches_the_card_and_the_steps_log(work, tmp_path):
    """rt-export made to fail on purpose for `report`: the card says its
    line (never 'no report was stored'), and so does the step's log."""
    real = shutil.which("rt-export")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "rt-export").write_text(
        "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = report ] && "
        "{ echo 'rt-export: the report failed on purpose (test)' >&2; exit 1; }; done\n"
        "exec %s \"$@\"\n" % real)
    (fake / "rt-export").chmod(0o755)
    for name in ("rt-recorder", "rt-export-full"):
        os.symlink(os.path.join(os.path.dirname(real), name), fake / name)
    p = run_flow(work, "minimal_flow.py", env={"RT_PREFIX": str(fake)})
    line = "rt-export: the report failed on purpose (test)"
    assert "no report for the card: " + line in p.stdout + p.stderr, p.stdout[-2000:]
    data = task_of("MinimalFlow", "start").data.resource_tracker_data
    assert data["rt"]["report_error"] == line and data["tracker"], data.get("rt")
    page = rt_card(task_of("MinimalFlow", "start"))
    assert line in page and "no report was stored" not in page, page[:800]


def step_line(page, which):
    """The decorator line a card shows: its own (scheduler-line) or the
    step's (step-line)."""
    import re
    m = re.search(r"<code id=%s>([^<]*)</code>" % which, page)
    return m.group(1) if m else None


def test_a_foreachs_branches_each_say_their_line_and_the_last_the_steps(work):
    """@resources is what the step was given; each branch's card its own
    line; the branch that ends last, after the others, the step's line: the
    largest any branch needs. The branches are named by Metaflow's ids."""
    run_flow(work, "branches_flow.py")
    from metaflow import Flow
    run = Flow("BranchesFlow").latest_run
    tasks = sorted(run["train"].tasks(), key=lambda t: t.data.resource_tracker_data["rt"]["run"])
    assert len(tasks) == 3
    own, steps = {}, {}
    for t in tasks:
        data = t.data.resource_tracker_data
        assert data["rt"]["asked"] == {"cpu": 2.0, "memory": 3000.0, "by": "@resources"}, data["rt"]
        show = json.loads(export("show", str(data["rt"]["run"])))
        assert show["allocation"]["memory_from"] == "request", show["allocation"]
        page = rt_card(t)
        assert "given 2 cores (asked)" in page and "given 2.9 GiB (asked)" in page, page[:600]
        assert "the whole host; nothing was asked" not in page
        own[t.id] = step_line(page, "scheduler-line")
        steps[t.id] = (data["rt"]["step"], page)
    mems = sorted(int(line.split("memory=")[1].rstrip(")")) for line in own.values())
    assert len(set(mems)) == 3, ("the branches' own lines differ", own)
    largest = "@resources(cpu=1, memory=%d)" % mems[-1]
    done = [(s, p) for s, p in steps.values() if s["all_ended"]]
    assert done, ("the last branch to end saw every branch ended", [s for s, _ in steps.values()])
    step, page = done[-1]
    assert step["line"] == largest and step["branches"] == 3 and step["recorded"] == 3, step
    assert step_line(page, "step-line") == largest, page[page.find("For the step, all"):][:600]
    assert "of all 3 branches, every one ended" in page
    # the branches' table names them by Metaflow's run and task ids
    assert "Metaflow run/step/task" in page
    for t in tasks:
        assert "%s/train/%s" % (run.id, t.id) in page, t.id
    # every branch's step line is at least its own
    for tid, (s, _) in steps.items():
        m = int(s["line"].split("memory=")[1].rstrip(")"))
        assert m >= int(own[tid].split("memory=")[1].rstrip(")")), (s, own[tid])
    browse(work, page, "foreach")
    # rt-export gives the same line for the step
    js = json.loads(export("recommend", "--job", "BranchesFlow", "--stage", "train",
                           "--external-run-id", str(run.id), "--json"))
    assert js["scheduler"]["line"] == largest and js["branches"]["count"] == 3, js
