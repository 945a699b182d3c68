#!/usr/bin/env python3
"""ASTRA's CGLS3D_CUDA and SIRT3D_CUDA on OUR simulated cone-beam scans at the same iteration
budgets as our iterative reconstruction (issue 18: "our iterative result at least as good as ASTRA's
CGLS/SIRT at the same iteration budget"). Quality exactly as `reconstudio-cli compare` measures it
(ct_scan.quality: PSNR against max|truth|, percent error, whole volume, never rescaled).

Three steps, because ASTRA needs the GPU machine and that machine has no h5py and no HDF5 build of
ours (the peers are benchmark references, never product dependencies):
 1. here:   astra_iterative.py export --cli reconstudio-cli --out DIR
            simulates the cases (`reconstudio-cli simulate --modality ct`), writes DIR/CASE.h5 and the
            same scan as DIR/CASE.npz (numpy only).
 2. GPU:    PYTHONPATH=/tmp/astra python3 tools/ct/astra_iterative.py astra DIR/*.npz --json astra.json
            (ASTRA unpacked as in astra_bench.py's header; `run_on_device.sh ct-peers` does it all).
 3. here:   astra_iterative.py ours --cli reconstudio-cli DIR/*.h5 --json ours.json
            astra_iterative.py table astra.json ours.json
Our rows come from one `compare` run per case and setting: CG's iterate k does not depend on the
iteration cap, and the CLI prints PSNR and error every 10 iterations (non-TTY), the last one being
compare's own row. ASTRA runs a fresh algorithm per budget.

Geometry: ASTRA's `cone_vec` written from our conventions (docs/CONVENTIONS.md, "Cone-beam CT"):
per view the source D_so (cos β, sin β, 0), the detector centre −(D_sd − D_so)(cos β, sin β, 0) +
u0 e_u + v0 e_v, u = p_u e_u, v = p_v e_v, in voxel units (ASTRA's volume spans ±n/2 voxels),
volume [z][y][x] as ours. `astra` checks the mapping first: ASTRA's projection of the voxelised
truth against our analytic data, beside the same for the truth mirrored along each axis (a wrong
mapping fits a mirror better, and the run stops).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_scan  # noqa: E402

# Sparse-view and low-dose 3D cases: the ct-3d demo geometry (64^3 of 4 mm, 96 x 96 detector).
CASES = {
    "ct-3d-sparse": ["--case", "ct-3d", "--views", "60"],
    "ct-3d-lowdose": ["--case", "ct-3d", "--photons", "500", "--seed", "18"],
}
BUDGETS = (10, 20, 50)


def export(args):
    os.makedirs(args.out, exist_ok=True)
    for name, extra in CASES.items():
        h5 = os.path.join(args.out, f"{name}.h5")
        run = subprocess.run([args.cli, "simulate", "--modality", "ct", *extra, "--output", h5, "--quiet"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"simulating {name} failed:\n{run.stderr}")
        scan = ct_scan.read_scan(h5)
        scan["name"] = np.array(name)
        scan["counts"] = None  # ASTRA's CGLS and SIRT take no weights; float32 truth: small enough to carry
        scan["truth"] = scan["truth"].astype(np.float32)
        ct_scan.export_npz(scan, os.path.join(args.out, f"{name}.npz"))
        print(f"wrote {args.out}/{name}.h5 and .npz: {ct_scan.describe(scan)}")
    return 0


def astra_geometry(astra, scan):
    n = [int(v) for v in scan["volume_size"]]
    voxel = [float(v) for v in scan["voxel_mm"]]
    if max(voxel) - min(voxel) > 1e-9 * max(voxel):
        raise SystemExit(f"{scan['name']}: ASTRA's voxel units need cubic voxels, got {voxel} mm")
    v = voxel[0]
    dso, dsd = float(scan["source_to_isocentre_mm"]), float(scan["source_to_detector_mm"])
    pu, pv = float(scan["pixel_u_mm"]), float(scan["pixel_v_mm"])
    u0, v0 = float(scan["offset_u_mm"]), float(scan["offset_v_mm"])
    centre = np.asarray(scan["volume_offset_mm"], dtype=np.float64)
    vectors = []
    for beta in scan["angles_rad"]:
        radial = np.array([np.cos(beta), np.sin(beta), 0.0])
        e_u, e_v = np.array([-np.sin(beta), np.cos(beta), 0.0]), np.array([0.0, 0.0, 1.0])
        source = dso * radial - centre
        detector = -(dsd - dso) * radial + u0 * e_u + v0 * e_v - centre
        vectors.append(np.concatenate([source / v, detector / v, pu / v * e_u, pv / v * e_v]))
    rows, cols = int(scan["detector_rows"]), int(scan["detector_columns"])
    return astra.create_vol_geom(n[1], n[0], n[2]), astra.create_proj_geom("cone_vec", rows, cols, np.array(vectors)), v


def astra_rows(args):
    import astra
    print(f"ASTRA {astra.__version__}, CUDA available: {astra.use_cuda()}", flush=True)
    out = []
    for path in args.scans:
        scan = ct_scan.read_scan(path)
        vol_geom, proj_geom, voxel = astra_geometry(astra, scan)
        truth = np.asarray(scan["truth"], np.float32)
        data = np.ascontiguousarray(np.asarray(scan["projections"], np.float32).transpose(1, 0, 2))  # (rows, views, cols)
        print(f"\n== {ct_scan.describe(scan)}", flush=True)

        def project(volume):
            pid, p = astra.create_sino3d_gpu(np.ascontiguousarray(volume), proj_geom, vol_geom, returnData=True)
            astra.data3d.delete(pid)
            return p * voxel  # voxel lengths to mm: our line integrals
        fits = {}
        for label, volume in (("as mapped", truth), ("x mirrored", truth[:, :, ::-1]), ("y mirrored", truth[:, ::-1, :]),
                              ("z mirrored", truth[::-1, :, :])):
            fits[label] = float(np.linalg.norm(project(volume) - data) / np.linalg.norm(data))
        print("   mapping: ASTRA's projection of the voxelised truth vs our analytic data (rms relative): " +
              ", ".join(f"{k} {100 * e:.2f} %" for k, e in fits.items()), flush=True)
        if min(fits, key=fits.get) != "as mapped":
            raise SystemExit("a mirrored volume fits our data better: the geometry mapping is wrong")
        for algorithm in ("CGLS3D_CUDA", "SIRT3D_CUDA"):
            for budget in BUDGETS:
                pid = astra.data3d.create("-sino", proj_geom, data)
                rid = astra.data3d.create("-vol", vol_geom, 0.0)
                cfg = astra.astra_dict(algorithm)
                cfg["ProjectionDataId"], cfg["ReconstructionDataId"] = pid, rid
                alg = astra.algorithm.create(cfg)
                t0 = time.perf_counter()
                astra.algorithm.run(alg, budget)
                image = astra.data3d.get(rid)
                seconds = time.perf_counter() - t0
                astra.algorithm.delete(alg)
                astra.data3d.delete([pid, rid])
                psnr, error = ct_scan.quality(image / voxel, truth)  # per voxel length to 1/mm
                row = dict(case=str(scan["name"]), method=f"ASTRA {algorithm.replace('3D_CUDA', '')}", iterations=budget,
                           seconds=seconds, psnr_db=psnr, error_percent=error)
                out.append(row)
                print(f"   {row['method']:12} {budget:3d} iterations {seconds:7.3f} s  {psnr:6.2f} dB  {error:6.2f} %",
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(peer=f"ASTRA {astra.__version__}", rows=out), f, indent=1)
    return 0


SETTINGS = {  # key -> (row label, extra `compare` arguments); all CG (a prior given means CG)
    "cg-fd": ("ours CG, fd prior, λ 0.1 × s", ["--regularizer", "fd"]),
    "unweighted": ("ours CG, fd prior, W = I", ["--regularizer", "fd", "--unweighted"]),
    "cgls": ("ours CG λ=0 unweighted (= CGLS)", ["--regularizer", "fd", "--lambda", "0", "--unweighted"]),
}


def ours_rows(args):
    out = []
    for path in args.scans:
        name = os.path.splitext(os.path.basename(path))[0]
        for key in args.settings.split(","):
            if key not in SETTINGS:
                raise SystemExit(f"unknown setting '{key}' ({', '.join(SETTINGS)})")
            label, extra = SETTINGS[key]
            cmd = [args.cli, "compare", "--modality", "ct", "--input", path, "--iterations", str(max(BUDGETS)),
                   "--backend", args.backend, "--json", *extra]
            t0 = time.perf_counter()
            run = subprocess.run(cmd, capture_output=True, text=True)  # stderr not a TTY: a line per 10 iterations
            seconds = time.perf_counter() - t0
            if run.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr}")
            summary = json.loads(run.stdout.strip().splitlines()[-1])
            progress = {int(m.group(1)): (float(m.group(2)), float(m.group(3))) for m in re.finditer(
                r"CG\s+(\d+)/\d+.*?PSNR\s+([\d.]+) dB\s+err\s+([\d.]+)%", run.stderr)}
            final = next(m for m in summary["methods"] if m["name"] == "iterative")
            last = progress.get(max(BUDGETS))
            if not last or abs(last[0] - final["psnr_db"]) > 0.01:
                raise SystemExit(f"{name}: the progress lines ({progress}) disagree with compare's row ({final})")
            fdk = next(m for m in summary["methods"] if m["name"] == "fdk")
            out.append(dict(case=name, method="ours FDK", iterations=0, seconds=fdk["seconds"],
                            psnr_db=fdk["psnr_db"], error_percent=fdk["error_percent"]))
            for budget in BUDGETS:
                psnr, error = progress[budget]
                out.append(dict(case=name, method=label, iterations=budget,
                                seconds=final["seconds"] if budget == max(BUDGETS) else None, psnr_db=psnr,
                                error_percent=error, lam=summary["lambda"], weighted=summary["weighted"]))
            print(f"{name} {label}: " + ", ".join(f"{b}: {progress[b][0]:.2f} dB" for b in BUDGETS) +
                  f" ({summary['backend']}, {seconds:.0f} s)", flush=True)
            if args.json:  # after each run: the runs are long on a CPU
                with open(args.json, "w") as f:
                    json.dump(dict(rows=out), f, indent=1)
    return 0


def table(args):
    rows = []
    for path in args.files:
        with open(path) as f:
            rows += json.load(f)["rows"]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    print("| case | method | " + " | ".join(f"{b} it. PSNR dB / error %" for b in BUDGETS) + " |")
    print("| --- | --- |" + " ---: |" * len(BUDGETS))
    for case in cases:
        methods = list(dict.fromkeys(r["method"] for r in rows if r["case"] == case))
        for method in methods:
            mine = {r["iterations"]: r for r in rows if r["case"] == case and r["method"] == method}
            if 0 in mine:  # FDK: one figure
                r = mine[0]
                cells = [f"{r['psnr_db']:.2f} / {r['error_percent']:.2f} (analytic)"] + [""] * (len(BUDGETS) - 1)
            else:
                cells = [f"{mine[b]['psnr_db']:.2f} / {mine[b]['error_percent']:.2f}" if b in mine else "–" for b in BUDGETS]
            print(f"| {case} | {method} | " + " | ".join(cells) + " |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("export", help="simulate the cases, write .h5 and .npz")
    p.add_argument("--cli", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("astra", help="ASTRA's CGLS and SIRT on .npz scans (GPU machine)")
    p.add_argument("scans", nargs="+")
    p.add_argument("--json")
    p = sub.add_parser("ours", help="our FDK and iterative rows on the .h5 scans")
    p.add_argument("scans", nargs="+")
    p.add_argument("--cli", required=True)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--settings", default="cg-fd", help=f"comma separated, of {', '.join(SETTINGS)}")
    p.add_argument("--json")
    p = sub.add_parser("table", help="the rows of several JSON files as one Markdown table")
    p.add_argument("files", nargs="+")
    args = ap.parse_args()
    return {"export": export, "astra": astra_rows, "ours": ours_rows, "table": table}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
