#!/usr/bin/env python3
"""swap.py A B SECONDS: exchange two names atomically (renameat2
RENAME_EXCHANGE) in a tight loop for SECONDS, as a user racing rt's opens
would (issue 38)."""
import ctypes
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2

libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
end = time.monotonic() + float(sys.argv[3])
n = 0
while time.monotonic() < end:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: errno %d" % ctypes.get_errno())
    n += 1
print("swaps", n)
