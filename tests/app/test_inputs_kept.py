#!/usr/bin/env python3
"""`recon` never writes its image over the data it reads (BART arrays under any name or link),
and adds results to a ReconStudio .h5 input while keeping its data."""
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(cli, *args):
    return subprocess.run([cli, *args, "--quiet"], capture_output=True, text=True, timeout=300)


def snapshot(folder):
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))}


def main(cli):
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw")
        if run(cli, "simulate", "--case", "small-2d", "--output", raw + ".cfl").returncode != 0:
            fail("simulate failed")
        os.symlink("raw_ksp.cfl", os.path.join(tmp, "link.cfl"))
        before = snapshot(tmp)
        for out in ("raw_ksp.cfl", "raw_ksp", "raw_traj.hdr", "link.cfl"):
            r = run(cli, "recon", "--trajectory", raw + "_traj", "--kspace", raw + "_ksp", "--iterations", "2",
                     "--output", os.path.join(tmp, out))
            if r.returncode != 1 or "would overwrite the input" not in r.stderr:
                fail(f"--output {out}: exit {r.returncode}, {r.stderr!r}")
            if snapshot(tmp) != before:
                fail(f"--output {out}: the input changed")
        print("OK: BART inputs refused as outputs, under every name")

        data = os.path.join(tmp, "data.h5")
        if run(cli, "simulate", "--case", "small-2d", "--output", data).returncode != 0:
            fail("simulate .h5 failed")
        r = run(cli, "recon", "--input", data, "--iterations", "2", "--output", data)
        if r.returncode != 0:
            fail(f"results into the .h5 input: {r.stderr}")
        r = run(cli, "compare", "--input", data, "--iterations", "2")
        if r.returncode != 0:
            fail(f"the .h5 input lost its data: {r.stderr}")
        print("OK: results added to the ReconStudio .h5 input, its data kept")


if __name__ == "__main__":
    main(sys.argv[1])
