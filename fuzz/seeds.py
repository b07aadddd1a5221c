#!/usr/bin/env python3
"""Writes the hand-made seeds of every fuzz target into fuzz/corpus/<target>/seed-*.

The seeds come from the test fixtures (tests/fixtures/index, tests/fixtures/sidecar), the
planner specs (tests/specs/pull, tests/specs/push) and the tricky paths of the path rules. Input
formats are described at the top of each target in fuzz/fuzz_targets/: a fixed-size header of
option bytes and numbers, then fields separated by the byte 0xFF. Run from anywhere: `python3 fuzz/seeds.py`. Existing seeds are
overwritten; corpus entries the fuzzer found are left alone.
"""

import json
import pathlib
import struct

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
CORPUS = FUZZ / "corpus"
SEP = b"\xff"

NS_SELECTOR = {None: 0, "ns": 2, "dat": 3}

TRICKY_PATHS = [
    "data/aws/ec2/vpc/m-1/state/3/raw",
    "data/aws/ec2/vpc/m-1/state/3/metadata.yaml",
    "workflow-runs/wf-1/run-1.json",
    "README",
    "../etc/passwd",
    "data/../../escape",
    "data/./x",
    "./x",
    "a//b",
    "/abs/path",
    "trailing/",
    "back\\slash",
    "nul\x00byte",
    "tab\there",
    "C:/windows",
    "c:x",
    "files/CON",
    "files/con.txt",
    "files/LPT1.log",
    "files/COM9",
    "files/COM0",
    "files/NUL .txt",
    ".datastore-index.json",
    ".push-queue.json",
    ".datastore.lock",
    ".datastore-sync-state.json",
    "_index/_meta.json",
    "_control/x",
    "data/x/.lock",
    "other/.namespace.json",
    "other/data/x",
    "ns/.namespace.json",
    "ns/data/x/y/m1/state/1/raw",
    "ns/_index/_meta.json",
    "ns/ns/data/x",
    "ns",
    "dat/data/x",
    "data/x/_catalog.db",
    "data/x/_catalog.db-wal",
    ".catalog-export.json",
    "secrets/token",
    "secrets",
    ".s3sync-repair/backup/data/x",
    "Data/X",
    "data/x",
    "caf\u00e9",
    "cafe\u0301",
    "\u212a",
    "x" * 1030,
    "data/" + "y" * 1015,
    "\ufffd",
]


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"seed-{name}").write_bytes(data)


def local_listing(rows):
    """`path \\0 size \\0 mtimeMs \\0` per file."""
    out = b""
    for path, size, mtime in rows:
        out += f"{path}\0{size}\0{'' if mtime is None else mtime}\0".encode()
    return out


def remote_page(rows):
    """`key \\0 size \\0 etag \\0 lastModified \\0` per object."""
    out = b""
    for key, size, etag, modified in rows:
        out += f"{key}\0{size}\0{etag or ''}\0{modified or ''}\0".encode()
    return out


def namespace_of(spec):
    ns = spec.get("namespace")
    # The fuzz targets bind to solo, `ns` or `dat`; other spec namespaces are renamed to `ns`.
    return None if ns is None else "ns"


def renamed(text, spec):
    ns = spec.get("namespace")
    if ns and ns != "ns":
        return text.replace(f"{ns}/", "ns/")
    return text


def index_v1():
    for path in sorted((ROOT / "tests/fixtures/index").glob("v1-*.json")):
        write("index_v1", path.stem, path.read_bytes())
    write(
        "index_v1",
        "numbers-in-extras",
        json.dumps(
            {
                "version": 1,
                "entries": {
                    "a": {"key": "a", "size": 0, "etag": 1.5, "n": -0.0, "big": 18446744073709551615},
                    "b/c": {"size": 9007199254740991, "sha256": None, "x": [0.1, 1e300, -7]},
                },
                "writer": {"floats": [3.141592653589793, 2.5e-308]},
            }
        ).encode(),
    )
    write("index_v1", "empty-object", b"{}")
    write("index_v1", "escapes", '{"entries":{"\\u00e9\\/x":{"size":1,"key":"\\u00e9/x"}}}'.encode())


def index_v2():
    fixtures = ROOT / "tests/fixtures/index"
    shards = [
        (fixtures / "shard-_root.json").read_bytes(),
        (fixtures / "shard-data--x--y--m1.json").read_bytes(),
        (fixtures / "shard-workflow-runs--wf-1.json").read_bytes(),
    ]
    write("index_v2", "meta-v2-shards", SEP.join([(fixtures / "meta-v2.json").read_bytes()] + shards))
    write("index_v2", "meta-v1", (fixtures / "meta-v1.json").read_bytes())
    write("index_v2", "meta-v2-minimal", (fixtures / "meta-v2-minimal.json").read_bytes())
    write(
        "index_v2",
        "duplicate-across-shards",
        SEP.join([b'{"version":2,"partitions":["_root","files"]}', shards[0], shards[0]]),
    )


def listing_rebuild():
    page1 = remote_page(
        [
            ("data/aws/ec2/vpc/m-1/state/3/raw", 12, '"etag"', "2026-08-01T12:00:00.000Z"),
            ("workflow-runs/wf-1/run.json", 40, None, None),
            (".datastore-index.json", 100, None, None),
            ("_index/_meta.json", 60, None, None),
            ("other/-x", 1, None, None),
            ("other/.namespace.json", 90, None, None),
            ("secrets/token", 32, None, None),
        ]
    )
    page2 = remote_page(
        [
            ("../escape", 1, None, None),
            ("a//b", 1, None, None),
            ("files/CON", 1, None, None),
            ("files/huge", 9007199254740992, None, None),
            ("files/neg", -1, None, None),
            ("Files/A", 1, None, None),
            ("files/a", 1, None, None),
            ("files/a/b", 1, None, None),
        ]
    )
    write("listing_rebuild", "solo-two-pages", b"\x00" + SEP.join([page1, page2]))
    ns_page = remote_page(
        [
            ("ns/data/x/y/m1/state/1/raw", 5, None, None),
            ("ns/.namespace.json", 90, None, None),
            ("ns/_index/_meta.json", 60, None, None),
            ("data/x/y/m1/state/1/raw", 5, None, None),
            ("nsx/data/a", 1, None, None),
            ("ns", 1, None, None),
        ]
    )
    write("listing_rebuild", "namespaced", b"\x02" + SEP.join([ns_page, page2]))
    write("listing_rebuild", "prefix-namespace", b"\x03" + SEP.join([remote_page([("dat/data/x", 1, None, None), ("data/x", 1, None, None)])]))
    write("listing_rebuild", "repeated-page", b"\x00" + SEP.join([page1, page1]))


def path_classify():
    # The target reads at most eight paths per input.
    for n in range(0, len(TRICKY_PATHS), 8):
        chunk = [p.encode() for p in TRICKY_PATHS[n : n + 8]]
        write("path_classify", f"tricky-solo-{n // 8}", SEP.join([b"", b"swamp"] + chunk))
        write("path_classify", f"tricky-ns-{n // 8}", SEP.join([b"ns", b"/team/swamp/"] + chunk))
    write("path_classify", "bad-namespaces", SEP.join([b"Data", b""] + [n.encode() for n in ["data", "_x", ".x", "a/b", "CON", "secrets", "x" * 1030]]))
    write("path_classify", "long-prefix", SEP.join([b"team-a", b"p" * 1000, b"data/x", b"team-a/data/x"]))


def pull_plan():
    for path in sorted((ROOT / "tests/specs/pull").glob("*.json")):
        spec = json.loads(path.read_text())
        opts = spec.get("options", {})
        flags = (
            (1 if opts.get("metadataOnly") else 0)
            | (2 if opts.get("caseInsensitive") else 0)
            | (4 if opts.get("keepExisting") else 0)
        )
        head = bytes([NS_SELECTOR[namespace_of(spec)], flags]) + struct.pack("<qqqq", 1785585600512, -1, 0, 253402300799999)
        index = renamed(json.dumps(spec["index"]), spec).encode()
        listing = local_listing((renamed(p, spec), s, m) for p, s, m in spec["local"])
        scope = [s.encode() for s in opts.get("scope", [])]
        write("pull_plan", path.stem, head + SEP.join([index, listing] + scope))
    records = "data/x/y/m1/state/1/raw\x0012\x00\x00\x00files/a\x003\x001785585600512\x00abc\x00"
    write(
        "pull_plan",
        "records-scoped",
        (b"\x02\x07" + bytes(32)) + SEP.join([records.encode(), local_listing([("ns/files/a", 3, 1785585600512)]), b"data/x/", b"files"]),
    )


def push_plan():
    for path in sorted((ROOT / "tests/specs/push").glob("*.json")):
        spec = json.loads(path.read_text())
        opts = spec.get("options", {})
        flags = (
            (1 if opts.get("deleteMissing") else 0)
            | (2 if opts.get("allowCatalogShrink") else 0)
            | (4 if opts.get("lazyPullActive") else 0)
            | (8 if opts.get("walkErrors") else 0)
            | (16 if opts.get("listingErrors") else 0)
            | 32
            | 64
        )
        max_deletes = opts.get("maxDeletes", 500)
        head = bytes(
            [
                NS_SELECTOR[namespace_of(spec)],
                flags,
                255 if max_deletes == 500 else min(max_deletes, 253),
                int(opts.get("maxDeletePercent", 25)),
            ]
        )
        index = renamed(json.dumps(spec["index"]), spec).encode()
        listing = local_listing((renamed(p, spec), s, m) for p, s, m in spec["local"])
        tombstones = [renamed(t, spec).encode() for t in spec.get("tombstones", [])]
        write("push_plan", path.stem, head + SEP.join([index, listing] + tombstones))
        if path.stem.startswith("16-"):
            # The same deletes with a percentage cap that is not a number, or infinite.
            for byte3, name in [(255, "nan-percent-cap"), (254, "infinite-percent-cap")]:
                odd = head[:3] + bytes([byte3])
                write("push_plan", name, odd + SEP.join([index, listing] + tombstones))
    records = (
        "files/a\x003\x001785585600512\x00" + "a" * 64 + "\x00"
        "files/gone\x005\x00\x00\x00"
        "other/x\x001\x00\x00\x00"
    )
    listing = local_listing([("files/a", 3, 1785585600999), ("other/.namespace.json", 9, None), ("other/x", 1, None)])
    write("push_plan", "records-foreign-folder", b"\x00\x61\xff\x19" + SEP.join([records.encode(), listing, b"files/gone", b"other"]))


def sidecar_lock():
    nums = struct.pack("<qqqQQ", 1785585600000, 1785585631000, 1785585600000, 60000, 1000) + b"\x05"
    lock = json.dumps(
        {
            "holder": "me@host",
            "hostname": "host",
            "pid": 42,
            "acquiredAt": "2026-08-01T12:00:00.000Z",
            "ttlMs": 30000,
            "nonce": "their-nonce",
        }
    ).encode()
    for path in sorted((ROOT / "tests/fixtures/sidecar").glob("*.json")):
        write("sidecar_lock", path.stem, nums + SEP.join([path.read_bytes(), lock, b"ns/data/x", b"ns/files/y"]))
    ours = lock.replace(b"their-nonce", b"our-nonce")
    backwards = struct.pack("<qqqQQ", 1785585631000, 1785585600000, 1785585631000, 60000, 0) + b"\x04"
    write("sidecar_lock", "ours-clock-backwards", backwards + SEP.join([b'{"version":2,"remoteIndexETag":"\\"abc-3\\"","lastVerifiedAt":"","localDirty":false}', ours]))
    write("sidecar_lock", "unreadable-lock", nums + SEP.join([b"", b"not json"]))


def run_machines():
    remote = b'ns/data/a.yaml\x001\x00"e"\x00\x00ns/other/x\x001\x00\x00\x00other/.namespace.json\x002\x00\x00\x00'
    local = b"data/a.yaml\x001\x001\x00ns/data/b.yaml\x001\x002\x00"
    index = b'{"version":1,"entries":{"data/a.yaml":{"size":1}}}'
    # Header byte: machine (0 rebuild, 1 repair, 2 migrate, 3 resolve, 4 contamination) and
    # options; each field a call, its first byte the method.
    write("run_machines", "rebuild-missing", bytes([0]) + SEP.join([b"\x02" + remote, b"\x03", b"\x05", b"\x07"]))
    write("run_machines", "rebuild-asked", bytes([8]) + SEP.join([b"\x01" + index, b"\x02" + remote, b"\x03", b"\x05", b"\x07"]))
    write("run_machines", "repair", bytes([1]) + SEP.join([b"\x09", b"\x02", b"\x03" + local, b"\x04data/a.yaml", b"\x05\x00\x00", b"\x06\x00", b"\x03", b"\x07"]))
    write("run_machines", "migrate", bytes([2]) + SEP.join([b"\x11", b"\x02" + index, b"\x03" + remote, b"\x05\x01", b"\x06", b"\x03" + remote, b"\x07", b"\x08\x01", b"\x09"]))
    write("run_machines", "resolve", bytes([3]) + SEP.join([b"\x01", b"\x02" + local, b"\x03data/a.yaml", b"\x04", b"\x05", b"\x06"]))
    write("run_machines", "contamination", bytes([4]) + SEP.join([b"\x01" + remote, b"\x03" + index, b"\x05", b"\x06\x01", b"\x07"]))


if __name__ == "__main__":
    index_v1()
    index_v2()
    listing_rebuild()
    path_classify()
    pull_plan()
    push_plan()
    sidecar_lock()
    run_machines()
    for target in sorted(CORPUS.iterdir()):
        print(target.name, len(list(target.iterdir())))
