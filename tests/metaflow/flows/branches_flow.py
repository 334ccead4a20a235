"""A foreach whose branches need different memory (60, 150 and 400 MiB),
on a step that asks @resources(cpu=2, memory=3000): each branch's card
says its own line, and the branch that ends last the step's line, the
largest any branch needs. The branches end one after another."""
import time

from metaflow import FlowSpec, resources, step, track_resources


class BranchesFlow(FlowSpec):
    @step
    def start(self):
        self.items = [60, 150, 400]
        self.next(self.train, foreach="items")

    @track_resources(interval=0.2)
    @resources(cpu=2, memory=3000)
    @step
    def train(self):
        block = bytearray(self.input << 20)
        block[::4096] = b"\x01" * len(block[::4096])
        time.sleep(0.8 + 1.2 * self.index)
        self.next(self.join)

    @step
    def join(self, inputs):
        self.next(self.end)

    @step
    def end(self):
        pass


if __name__ == "__main__":
    BranchesFlow()
