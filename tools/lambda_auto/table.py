#!/usr/bin/env python3
"""lambda auto against the best lambda of a sweep, on the demo cases (docs/SPARSE.md).

For every case and prior: `reconstudio-cli compare --lambda auto` and the same with each lambda of
a sweep; prints one markdown row per (case, prior) with the auto lambda, its PSNR, the best of the
sweep and the gap, then the gridding rows and the seconds of each auto solve.

    python3 tools/lambda_auto/table.py build/app/cli/reconstudio-cli [--cases a,b] [--iterations 200]
    python3 tools/lambda_auto/table.py CLI --cases default,radial-3d-noisy --priors tv,wavelet \
        --iterations 100 --sparse-sweep 0.05,0.2,1     # the 3D rows (docs/SPARSE.md)
A case ending in .h5 is a file made by `reconstudio-cli simulate` (e.g. a 32^3 kooshball).
"""
import argparse
import json
import subprocess
import sys

SPARSE = [0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0]
QUADRATIC = [0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30]


def compare(cli, case, prior, lam, iterations, extra):
    data = ["--input", case] if case.endswith(".h5") else ["--case", case]  # a file from `reconstudio-cli simulate`
    cmd = [cli, "compare", *data, "--regularizer", prior, "--lambda", str(lam), "--iterations",
           str(iterations), "--json", "--quiet", "--no-floor"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    rows = {m["name"]: m for m in out["methods"]}
    it = next(m for n, m in rows.items() if n.startswith("iterative"))
    return out, rows, it


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--cases", default="small-2d,radial-2d,radial-2d-noisy,spiral-2d,spiral-2d-noisy")
    ap.add_argument("--priors", default="tv,wavelet,fd,tikhonov")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--sparse-sweep", default=",".join(map(str, SPARSE)), help="the sparse priors' lambdas")
    a = ap.parse_args()
    extra = ["--threads", "2"]
    sparse_sweep = [float(v) for v in a.sparse_sweep.split(",")]
    print("| case | prior | auto λ | PSNR at auto | best λ of the sweep | best PSNR | gap dB | auto seconds |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    gridding = {}
    for case in a.cases.split(","):
        for prior in a.priors.split(","):
            out, rows, it = compare(a.cli, case, prior, "auto", a.iterations, extra)
            gridding[case] = {n: m for n, m in rows.items() if n.startswith("gridding")}
            sweep = sparse_sweep if prior in ("tv", "wavelet", "anatomical-tv") else QUADRATIC
            best = max(((lam, compare(a.cli, case, prior, lam, a.iterations, extra)[2]["psnr_db"]) for lam in sweep),
                       key=lambda t: t[1])
            print(f"| {case} | {prior} | {out['lambda']:.3g} | {it['psnr_db']:.2f} | {best[0]:g} | {best[1]:.2f} | "
                  f"{it['psnr_db'] - best[1]:+.2f} | {it['seconds']:.2f} |", flush=True)
    print()
    print("| case | gridding | PSNR | seconds |")
    print("| --- | --- | ---: | ---: |")
    for case, rows in gridding.items():
        for n, m in rows.items():
            print(f"| {case} | {n} | {m['psnr_db']:.2f} | {m['seconds']:.2f} |")


if __name__ == "__main__":
    main()
