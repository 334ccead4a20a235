"""rt's Metaflow extension: the @track_resources step decorator (`from
metaflow import track_resources`) and its card, `tracked_resources`
(cards/tracked_resources). Metaflow finds this module by its name
(metaflow_extensions/<org>/plugins/mfextinit_<org>.py)."""
STEP_DECORATORS_DESC = [("track_resources", ".track_resources.TrackResourcesDecorator")]
