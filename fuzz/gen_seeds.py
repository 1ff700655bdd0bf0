#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Write the seed corpora of the fuzz targets into fuzz/corpus/<target>/.

decode:      one flag byte (see fuzz_decode.c) + a TASKSTATS_CMD_NEW message:
             the real v16 messages captured on a 6.18 kernel
             (tests/decode/data/*.bin) and synthetic ones of every struct
             version (v1..v17, v0 TGID aggregates, v15, both "v14 with a
             longer payload" variants), with and without AGGR_TGID, plus
             the plain PID/TGID + STATS form, an ack and a truncated one.
proc_cgroup: one selector byte (hierarchy, buffer size) + /proc/<pid>/cgroup
             text of a hybrid, a v2-only and a v1-only host.
capture:     one mode byte (bit 0: fix up checksums) + a capture file with
             the above messages (format of cmd/collect/run/capture.h, CRC-32 = zlib's).
escape:      names (cgroup paths, comms) with hostile bytes, as is.

Deterministic: re-running it rewrites the same bytes. Run from anywhere.
"""
import json
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
REAL = os.path.join(ROOT, "tests", "decode", "data")

SIZES = {1: 72, 2: 248, 3: 272, 4: 272, 5: 288, 6: 312, 7: 328, 8: 328,
         9: 344, 10: 352, 11: 368, 12: 400, 13: 416, 14: 432, 15: 560,
         16: 560, 17: 688}
FAMILY = 0x1f  # TASKSTATS id on the machine the real seeds came from


def payload(version, size, pid, tgid, agroup, layout=None):
    """A struct taskstats of `size` bytes carrying `version`, with the
    fields a consumer looks at placed where `layout` keeps them."""
    layout = version if layout is None else layout
    b = bytearray(size)
    struct.pack_into("<H", b, 0, version)
    if layout == 1:
        # version, pad[3], then cpu_count at 8 .. cpu_run_virtual at 64
        for i, off in enumerate(range(8, 72, 8)):
            struct.pack_into("<Q", b, off, 1000 * (i + 1))
        return bytes(b)
    comm, pid_off, tgid_off = 80, 128, 368
    if layout == 15:  # max/min pairs after each *_delay_total
        comm, pid_off, tgid_off = 128, 176, 464
    elif layout == 114:  # v14 "max only": one u64 after each total
        comm, pid_off, tgid_off = 104, 152, 416
    struct.pack_into("<I", b, 4, 0x0100)            # exit status 1
    b[8] = 0x20 if agroup else 0                    # ac_flag
    struct.pack_into("<Q", b, 16, 3)                # cpu_count
    struct.pack_into("<Q", b, 24, 12345)            # cpu_delay_total
    if size >= comm + 32:
        name = ("seed-v%d" % version).encode()
        b[comm:comm + len(name)] = name
    for off, val in ((pid_off, pid), (pid_off + 4, 1)):  # ac_pid, ac_ppid
        if size >= off + 4:
            struct.pack_into("<I", b, off, val)
    if version >= 12 and size >= tgid_off + 4 and layout != 114:
        struct.pack_into("<I", b, tgid_off, tgid)
    if version >= 16 and size >= 560:
        for i, off in enumerate(range(432, 560, 16)):  # delay max/min pairs
            struct.pack_into("<QQ", b, off, 900 + i, 100 + i)
    for off in range(560, size, 8):
        b[off] = 0xee  # bytes of a version newer than the decoder knows
    return bytes(b)


def nla(typ, data):
    n = 4 + len(data)
    return struct.pack("<HH", n, typ) + data + b"\0" * ((4 - n % 4) % 4)


def msg(attrs, cmd=2, typ=FAMILY, seq=7):
    body = struct.pack("<BBH", cmd, 1, 0) + b"".join(attrs)
    return struct.pack("<IHHII", 16 + len(body), typ, 0, seq, 0) + body


def aggr(kind, ident, stats):
    # AGGR_PID = 4 { PID = 1 }, AGGR_TGID = 5 { TGID = 2 }; STATS = 3
    idtype = 1 if kind == 4 else 2
    return nla(kind, nla(idtype, struct.pack("<I", ident)) + nla(3, stats))


def decode_seeds():
    seeds = {}
    for name in sorted(os.listdir(REAL)):
        if name.endswith(".bin"):
            with open(os.path.join(REAL, name), "rb") as f:
                seeds["real_" + name] = f.read()
    for v in range(1, 18):
        size = SIZES[v]
        single = payload(v, size, 4242, 4242, True)
        seeds["v%02d_single.bin" % v] = msg([aggr(4, 4242, single)])
        if v >= 2:
            last = payload(v, size, 4243, 4240, True)
            # older kernels send TGID aggregates as version 0
            grp = payload(v if v >= 12 else 0, size, 0, 0, False)
            seeds["v%02d_tgid.bin" % v] = msg(
                [aggr(4, 4243, last), aggr(5, 4240, grp), nla(6, b"")])
    # 6.14-rc kernels: "version 14" with the v15 layout or max-only layout
    seeds["v14_long560.bin"] = msg(
        [aggr(4, 77, payload(14, 560, 77, 77, True, layout=15))])
    seeds["v14_maxonly496.bin"] = msg(
        [aggr(4, 78, payload(14, 496, 78, 78, True, layout=114))])
    seeds["v15_broken.bin"] = msg(
        [aggr(4, 79, payload(15, 560, 79, 79, True, layout=15))])
    # plain PID, STATS at top level (no nest)
    seeds["plain_pid.bin"] = msg(
        [nla(1, struct.pack("<I", 80)), nla(3, payload(16, 560, 80, 80, 1))])
    seeds["plain_tgid.bin"] = msg(
        [nla(2, struct.pack("<I", 81)), nla(3, payload(16, 560, 0, 81, 0))])
    # an ack (NLMSG_ERROR) and a message cut short inside STATS
    seeds["ack.bin"] = struct.pack("<IHHIIi", 36, 2, 0, 1, 0, 0) + bytes(16)
    seeds["truncated.bin"] = seeds["v16_single.bin"][:300]
    out = {}
    for name, m in seeds.items():
        out["f0_" + name] = b"\x00" + m
    # the same messages with other flag bytes (no-tgid, misalignment)
    out["f1_v16_tgid.bin"] = b"\x01" + seeds["v16_tgid.bin"]
    out["f6_real_v16_exit_tgid.bin"] = b"\x06" + seeds[
        "real_v16_exit_tgid.bin"]
    # bare payloads for cgs_decode_payload (flag bit 7)
    out["p_v01.bin"] = b"\x80" + payload(1, 72, 5, 5, False)
    out["p_v16.bin"] = b"\x90" + payload(16, 560, 5, 5, True)
    return out, seeds


def proc_cgroup_seeds():
    hybrid = (b"12:rdma:/\n11:cpuset:/\n10:cpu,cpuacct:/user.slice\n"
              b"9:memory:/user.slice/user-0.slice\n"
              b"8:blkio:/\n1:name=systemd:/user.slice/session-1.scope\n"
              b"0::/user.slice/session-1.scope\n")
    v2 = b"0::/system.slice/cron.service\n"
    deleted = b"0::/a/b (deleted)\n"
    v1 = b"4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n2:pids:/\n"
    odd = b"0::/with space/\"quote\"/back\\slash/\xff\xfe/tab\t\n"
    # selector: bits 0-1 hierarchy (v2, cpu, memory, name=systemd),
    # bits 2-4 buffer size index (see fuzz_proc_cgroup.c)
    return {
        "hybrid_v2.txt": b"\x1c" + hybrid,
        "hybrid_cpu.txt": b"\x1d" + hybrid,
        "hybrid_mem_small.txt": b"\x06" + hybrid,
        "hybrid_systemd.txt": b"\x1f" + hybrid,
        "v2only.txt": b"\x1c" + v2,
        "v2_deleted.txt": b"\x1c" + deleted,
        "v1only_mem.txt": b"\x1e" + v1,
        "odd_bytes.txt": b"\x1c" + odd,
        "long_path.txt": b"\x18" + b"0::/" + b"x" * 250 + b"/" + b"y" * 250
                         + b"\n",
    }


def capture_file(msgs):
    info = b"host=seed\nkernel=6.18\n"
    hdr = bytearray(b"\x89TSCAP\r\n" + struct.pack(
        "<IIQII", 1, 32 + len(info), 1764470000000000000, 2, 0) + info)
    struct.pack_into("<I", hdr, 28, zlib.crc32(bytes(hdr)))
    out = bytes(hdr)

    def rec(typ, body):
        h = bytearray(struct.pack("<IIII", 0x52435354, typ, len(body), 0))
        struct.pack_into("<I", h, 12, zlib.crc32(bytes(h) + body))
        return bytes(h) + body

    t = 1764470000000000000
    for i, (m, tp, gp) in enumerate(msgs):
        body = struct.pack("<QIIHHI", t + i, i % 2, len(m), len(tp),
                           len(gp), 0) + m + tp + gp
        out += rec(1, body)
    out += rec(9, b"future record type")  # readers skip unknown types
    out += rec(2, struct.pack("<6Q", t + 99, 0, 0, 0, 0, 0))
    return out


def capture_seeds(seeds):
    msgs = [(seeds["real_v16_exit.bin"], b"/user.slice", b""),
            (seeds["real_v16_exit_tgid.bin"], b"/a b/\"q\"", b"/a b/\"q\""),
            (seeds["v12_tgid.bin"], b"/", b"/"),
            (seeds["v01_single.bin"], b"(unknown)", b"")]
    good = capture_file(msgs)
    return {
        "m0_good.cap": b"\x00" + good,
        "m1_good.cap": b"\x01" + good,
        "m1_empty.cap": b"\x01" + capture_file([]),
        "m0_truncated.cap": b"\x00" + good[:len(good) - 40],
        "m0_version2.cap": b"\x00" + good[:8] + struct.pack("<I", 2)
                           + good[12:],
    }


def escape_seeds():
    names = [b"/user.slice/session-1.scope", b" lead and trail ",
             b"q\"uo'te\\back", b"ctl\x01\x1b[31m\x7f\t\r\n",
             b"inv\xff\xfe\xc3x\x80\xe2\x82", b"\xc3\xa9\xf0\x9f\x98\x80",
             b"csv,f\"x\"\"", b"prom{a=\"b\"} 1 #", b"\xed\xa0\x80\xf4\x90"
             b"\x80\x80\xc0\xaf\xe0\x80\xaf", b"",
             b"/system.slice/system-systemd\\x2dfsck.slice\\xff\xff\\\\x"]
    return {"name%02d.txt" % i: n for i, n in enumerate(names)}


def identity_seeds():
    cid = "4f3a1e0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
    uid = "0b5c1d6e-7f80-4a91-b2c3-d4e5f6a7b8c9"
    ctrd = {"ociVersion": "1.1.0", "annotations": {
        "io.kubernetes.cri.container-type": "container",
        "io.kubernetes.cri.container-name": "web",
        "io.kubernetes.cri.sandbox-name": "shop-7d9f",
        "io.kubernetes.cri.sandbox-namespace": "prod",
        "io.kubernetes.cri.sandbox-uid": uid,
        "io.kubernetes.cri.image-name": "registry.example/shop:1.4"}}
    labels = {"io.kubernetes.pod.name": "shop-7d9f",
              "io.kubernetes.pod.namespace": "prod",
              "io.kubernetes.container.name": "web"}
    crio = {"annotations": {
        "io.kubernetes.cri-o.ContainerType": "sandbox",
        "io.kubernetes.cri-o.ImageName": "quay.io/shop:1.4",
        "io.kubernetes.cri-o.Labels": json.dumps(labels)}}
    docker = {"Name": "/shop-web-1", "Config": {"Image": "shop:1.4",
              "Labels": {"com.docker.compose.project": "shop",
                         "com.docker.compose.service": "web"}}}
    return {
        "containerd.json": json.dumps(ctrd).encode(),
        "crio.json": json.dumps(crio).encode(),
        "docker.json": json.dumps(docker).encode(),
        "loglink.txt": ("shop-7d9f_prod_web-%s.log" % cid).encode(),
        "poddir.txt": ("prod_shop-7d9f_%s" % uid).encode(),
        "deep.json": b"[" * 40 + b"]" * 40,
        "badutf8.json": b'{"annotations":{"io.kubernetes.pod.name":"\xff"}}',
    }


def write(target, files):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    dec, seeds = decode_seeds()
    write("decode", dec)
    write("proc_cgroup", proc_cgroup_seeds())
    write("capture", capture_seeds(seeds))
    write("escape", escape_seeds())
    write("identity", identity_seeds())


if __name__ == "__main__":
    main()
