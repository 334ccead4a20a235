"""A foreach of three tracked tasks (run side by side by the local runtime)."""
import time

from metaflow import FlowSpec, step, track_resources


class ForeachFlow(FlowSpec):
    @step
    def start(self):
        self.items = [0.6, 0.8, 1.0]
        self.next(self.work, foreach="items")

    @track_resources(interval=0.2)
    @step
    def work(self):
        t = time.time()
        while time.time() - t < self.input:
            pass
        self.next(self.join)

    @step
    def join(self, inputs):
        self.next(self.end)

    @step
    def end(self):
        pass


if __name__ == "__main__":
    ForeachFlow()
