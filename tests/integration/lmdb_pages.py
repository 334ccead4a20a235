#!/usr/bin/env python3
"""lmdb_pages.py DATA.MDB: the pages of an LMDB file's current snapshot that
hold the tree's top: "main" (the main database's root), and for each of
rt's databases its root ("runs", "samples", "inventory") and depth, one
per line as NAME PAGE DEPTH. Read from the file alone (LMDB 0.9's format),
so a test can damage exactly the page it means (issue 38, item 13)."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
PS = struct.unpack_from("<I", data, 16 + 24)[0]  # FREE_DBI's md_pad: the page size


def meta(pg):
    base = pg * PS + 16
    main = base + 24 + 48
    depth = struct.unpack_from("<H", data, main + 6)[0]
    root = struct.unpack_from("<Q", data, main + 40)[0]
    txnid = struct.unpack_from("<Q", data, base + 128)[0]
    return txnid, root, depth


txnid, root, depth = max(meta(0), meta(1))
print("main", root, depth)
page = data[root * PS:(root + 1) * PS]
lower = struct.unpack_from("<H", page, 12)[0]
for i in range((lower - 16) // 2):
    off = struct.unpack_from("<H", page, 16 + 2 * i)[0]
    flags, ksize = struct.unpack_from("<HH", page, off + 4)
    key = page[off + 8:off + 8 + ksize].decode("latin-1")
    if flags & 2:  # F_SUBDATA: an MDB_db record
        db = off + 8 + ksize
        print(key, struct.unpack_from("<Q", page, db + 40)[0], struct.unpack_from("<H", page, db + 6)[0])
