"""rt's Metaflow extension: the @track_resources step decorator (`from
metaflow import track_resources`) and its card, `tracked_resources`
(cards/tracked_resources). Metaflow finds this module by its name
(metaflow_extensions/<org>/plugins/mfextinit_<org>.py).

The reference's extension (resource-tracker's) has a decorator and a card
of the same names; with both installed Metaflow takes the one it loads
last, silently. This module says which one runs, once per flow (its tasks,
started by the flow's process, inherit that it was said)."""
import importlib.util
import os
import sys

STEP_DECORATORS_DESC = [("track_resources", ".track_resources.TrackResourcesDecorator")]

_REFERENCE = "metaflow_extensions.resource_tracker"


def _reference_installed():
    try:
        return importlib.util.find_spec(_REFERENCE) is not None
    except (ImportError, ValueError):
        return False


def _say_which_runs():
    """One line when both extensions are installed: the reference's loaded
    before this one means this one is loaded last, and runs."""
    if os.environ.get("RT_METAFLOW_SAID") or not _reference_installed():
        return
    os.environ["RT_METAFLOW_SAID"] = "1"
    if any(m == _REFERENCE or m.startswith(_REFERENCE + ".") for m in sys.modules):
        line = ("rt: @track_resources is rt's (rt_tracker); the reference's resource-tracker "
                "extension is installed too and is not used")
    else:
        line = ("rt: @track_resources is the reference's (resource-tracker), not rt's: both "
                "extensions are installed and Metaflow takes the one it loads last; "
                "pip uninstall resource-tracker to use rt's")
    sys.stderr.write(line + "\n")


_say_which_runs()
