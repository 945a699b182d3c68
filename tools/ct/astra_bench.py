#!/usr/bin/env python3
"""ASTRA Toolbox's GPU cone-beam projector and backprojector on ct_dd_bench's geometries
(issue 18's peer rows): whole calls as a user makes them (numpy arrays in and out), median of
3 after one warm-up, printed as rows beside ours when ct_dd_bench's output is given.

ASTRA is a benchmark peer, not a dependency. Its wheels, fetched here (ignored by git):
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl \
      astra-toolbox==2.5.0 nvidia-cuda-runtime-cu12
and on the GPU machine (Python 3.12, numpy, scipy), with .whl carried:
  unzip -q -o .whl/astra_toolbox-2.5.0-*.whl -d /tmp/astra
  unzip -q -o .whl/nvidia_cuda_runtime_cu12-*.whl -d /tmp/astra
  mkdir -p /tmp/astra/nvidia/cufft/lib
  gcc -shared -fPIC -Wl,-soname,libcufft.so.11 -Wl,--version-script=tools/ct/cufft_standin.map \
      -o /tmp/astra/nvidia/cufft/lib/libcufft.so.11 tools/ct/cufft_standin.c
  PYTHONPATH=/tmp/astra python3 tools/ct/astra_bench.py --sizes 256,512 [--ours ct-bench.txt]
(libastra.so.0 finds both libraries through its RUNPATH, $ORIGIN/../nvidia/*/lib.)

Geometry (ct_dd_bench's): N^3 voxels over 256 mm, full scan, source-isocentre 600 mm,
source-detector 1000 mm, a (2N) x (3N/2) detector of 1.6 x 256/N mm pixels. ASTRA's lengths
are in voxels; its cone angle theta puts the source at (sin, -cos) * D_so, ours beta at
(cos, sin) * D_so, so theta = beta + pi/2 gives the same rays.
"""
import argparse
import re
import statistics
import sys
import time

import numpy as np


def geometry(n):
    voxel = 256.0 / n
    views = 360 if n <= 256 else 720
    return dict(n=n, voxel=voxel, views=views, cols=2 * n, rows=3 * n // 2, pixel=1.6 * 256.0 / n, dso=600.0, dsd=1000.0)


def head_object(n, voxel):
    """ct_dd_bench's object: a water ball with two ellipsoidal inserts and a gentle ramp (1/mm), (z, y, x)."""
    c = (np.arange(n) - 0.5 * (n - 1)) * voxel
    r = 0.45 * n * voxel
    z, y, x = np.meshgrid(c / r, c / r, c / r, indexing="ij")
    mu = np.where(x * x + y * y + z * z < 1.0, 0.019 + 0.002 * x, 0.0)
    mu = mu + np.where((x - 0.3) ** 2 / 0.04 + y * y / 0.09 + z * z / 0.16 < 1.0, 0.01, 0.0)
    mu = mu - np.where((x + 0.35) ** 2 / 0.02 + (y - 0.2) ** 2 / 0.02 + z * z / 0.3 < 1.0, 0.005, 0.0)
    return mu.astype(np.float32)


def median_seconds(f, repeat):
    f()  # warm-up: contexts, plans
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ours_from(path):
    """Whole-call milliseconds per (size, interpolation, direction) from ct_dd_bench's output."""
    rows, size = {}, None
    for line in open(path):
        m = re.match(r"== (\d+)\^3 volume", line)
        if m:
            size = int(m.group(1))
        m = re.match(r"(texture|software)\s+(FP|BP)\s+([\d.]+)\s+([\d.]+)", line)
        if m and size:
            rows[(size, m.group(1), m.group(2))] = float(m.group(4)) * 1e-3
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="256", help="volume sizes N (N^3), comma separated: 256, 512")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ours", help="ct_dd_bench's output, for the ratio columns")
    args = ap.parse_args()
    import astra

    ours = ours_from(args.ours) if args.ours else {}
    print(f"ASTRA {astra.__version__}, CUDA available: {astra.use_cuda()}")
    print(f"{'N':>5} {'views':>5} {'dir':>3} {'astra_s':>9} {'Gvv/s':>7} {'ours_texture_s':>15} {'x_texture':>10} {'ours_software_s':>16} {'x_software':>11}")
    for n in [int(s) for s in args.sizes.split(",")]:
        g = geometry(n)
        v = g["voxel"]
        angles = 2 * np.pi * np.arange(g["views"]) / g["views"] + np.pi / 2
        vol_geom = astra.create_vol_geom(n, n, n)
        proj_geom = astra.create_proj_geom("cone", g["pixel"] / v, g["pixel"] / v, g["rows"], g["cols"], angles,
                                           g["dso"] / v, (g["dsd"] - g["dso"]) / v)
        volume = head_object(n, v)

        def fp():
            pid, data = astra.create_sino3d_gpu(volume, proj_geom, vol_geom, returnData=True)
            astra.data3d.delete(pid)
            return data

        projections = fp()  # (rows, views, cols), in voxel units of length
        projections *= v    # to line integrals in mm x 1/mm

        def bp():
            bid, data = astra.create_backprojection3d_gpu(projections, proj_geom, vol_geom, returnData=True)
            astra.data3d.delete(bid)
            return data

        for name, f in (("FP", fp), ("BP", bp)):
            s = median_seconds(f, args.repeat)
            tex = ours.get((n, "texture", name))
            sw = ours.get((n, "software", name))
            print(f"{n:>5} {g['views']:>5} {name:>3} {s:9.3f} {n ** 3 * g['views'] / s * 1e-9:7.1f} "
                  f"{tex if tex else float('nan'):15.3f} {s / tex if tex else float('nan'):9.1f}x "
                  f"{sw if sw else float('nan'):16.3f} {s / sw if sw else float('nan'):10.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
