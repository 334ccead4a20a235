"""The `tracked_resources` card: rt's report of a task, as @track_resources
stored it in the task's artifact (one self-contained HTML page: its charts
need no network), or what went wrong, said on the card."""
import html

from metaflow.cards import MetaflowCard


class TrackedResourcesCard(MetaflowCard):
    """Added by @track_resources to its step; not for direct use."""

    type = "tracked_resources"
    ALLOW_USER_COMPONENTS = False
    RUNTIME_UPDATABLE = False

    def __init__(self, options=None, **kwargs):
        super().__init__(**kwargs)
        self._artifact = (options or {}).get("artifact_name", "resource_tracker_data")

    def render(self, task):
        try:
            data = getattr(task.data, self._artifact)
        except Exception as e:
            return _page("No resource data", "<p>The task has no artifact %s (%s).</p>"
                         % (html.escape(self._artifact), html.escape(str(e))))
        rt = (data.get("rt") or {}) if isinstance(data, dict) else {}
        page = rt.get("report_html")
        if page:
            return page
        err = data.get("error") if isinstance(data, dict) else None
        if rt.get("report_error"):
            body = ("<p>rt measured this step, but its report could not be made: "
                    "<b>%s</b></p><p>The figures are in the artifact %s; "
                    "<code>rt-export report %s --store %s</code> makes the page again.</p>"
                    % (html.escape(str(rt["report_error"])), html.escape(self._artifact),
                       html.escape(str(rt.get("run", ""))), html.escape(str(rt.get("store", "")))))
        elif isinstance(err, dict):
            body = ("<p>rt could not measure this step, so this card has no figures.</p>"
                    "<p><b>%s</b>: %s</p><pre>%s</pre>"
                    % (html.escape(str(err.get("error_type", ""))),
                       html.escape(str(err.get("error_message", ""))),
                       html.escape(str(err.get("traceback", "")))))
        else:
            body = "<p>%s</p>" % html.escape(str(err or "no report was stored"))
        return _page("No resource data", body)


def _page(title, body):
    return ("<!DOCTYPE html><html><head><meta charset=utf-8><title>%s</title></head>"
            "<body style='font:14px system-ui,sans-serif;margin:24px'><h1>%s</h1>%s</body>"
            "</html>" % (html.escape(title), html.escape(title), body))


CARDS = [TrackedResourcesCard]
