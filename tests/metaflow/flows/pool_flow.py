"""A fork pool: two workers busy at once for about 2 s."""
import time
from multiprocessing import Pool

from metaflow import FlowSpec, step, track_resources


def burn(secs):
    t = time.time()
    while time.time() - t < secs:
        pass
    return secs


class PoolFlow(FlowSpec):
    @track_resources(interval=0.25)
    @step
    def start(self):
        with Pool(2) as p:
            p.map(burn, [2.0] * 2)
        self.next(self.end)

    @step
    def end(self):
        pass


if __name__ == "__main__":
    PoolFlow()
