"""rt_tracker: the resource-tracker Python API backed by rt.

    from rt_tracker import ResourceTracker   # instead of resource_tracker
"""
from .table import StatSpec, Table
from .tracker import (DEFAULT_STORE, Report, ResourceTracker, RtBudgetWarning, RtMissingWarning,
                      find_binary, get_cloud_info, get_server_info, track)
from .writers import ProcessTracker, SystemTracker

__version__ = "0.1.0"


def load_ipython_extension(ip):
    """`%load_ext rt_tracker`: the %%track cell magic (rt_tracker.notebook)."""
    from .notebook import load

    load(ip)

__all__ = [
    "ResourceTracker", "ProcessTracker", "SystemTracker", "Report", "RtMissingWarning", "Table",
    "find_binary", "track", "get_server_info", "get_cloud_info", "DEFAULT_STORE", "StatSpec", "RtBudgetWarning",
]
