"""One tracked step: 200 MiB held while one core is busy for 1.5 s."""
import time

from metaflow import FlowSpec, step, track_resources


class MinimalFlow(FlowSpec):
    @track_resources(interval=0.2)
    @step
    def start(self):
        block = bytearray(200 << 20)
        block[:: 4096] = b"\x01" * len(block[:: 4096])  # touched: resident
        t = time.time()
        while time.time() - t < 1.5:
            pass
        del block
        self.next(self.end)

    @step
    def end(self):
        pass


if __name__ == "__main__":
    MinimalFlow()
