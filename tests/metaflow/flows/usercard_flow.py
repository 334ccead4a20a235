"""A tracked step with the user's own @card beside rt's."""
import time

from metaflow import FlowSpec, card, current, step, track_resources
from metaflow.cards import Markdown


class UserCardFlow(FlowSpec):
    @card(type="blank", id="mine")
    @track_resources(interval=0.2)
    @step
    def start(self):
        current.card["mine"].append(Markdown("# the user's own card"))
        time.sleep(1.0)
        self.next(self.end)

    @step
    def end(self):
        pass


if __name__ == "__main__":
    UserCardFlow()
