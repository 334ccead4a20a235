"""A GPU process outside the tracked tree: 3 GiB and light work."""
import time

import torch

x = torch.empty(3 << 30, dtype=torch.uint8, device="cuda")
a = torch.randn(2048, 2048, device="cuda")
while True:
    b = a @ a
    torch.cuda.synchronize()
    time.sleep(0.05)
