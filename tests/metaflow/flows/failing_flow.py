"""A tracked step that fails after 1 s of work."""
import time

from metaflow import FlowSpec, step, track_resources


class FailingFlow(FlowSpec):
    @track_resources(interval=0.2)
    @step
    def start(self):
        t = time.time()
        while time.time() - t < 1.0:
            pass
        raise RuntimeError("this step fails on purpose")
        self.next(self.end)  # never reached (Metaflow's graph needs it)

    @step
    def end(self):
        pass


if __name__ == "__main__":
    FailingFlow()
