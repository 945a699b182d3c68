#!/usr/bin/env python3
"""Every parameter has a checked range: a bad value exits non-zero with a message naming the
option and its range (numbers in their shortest form, never "%f" padding), before any work."""
import os
import re
import struct
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(cli, *args):
    return subprocess.run([cli, *args, "--quiet"], capture_output=True, text=True, timeout=300)


def expect_refused(cli, args, expected):
    r = run(cli, *args)
    if r.returncode == 0:
        fail(f"{args} was accepted")
    if expected not in r.stderr:
        fail(f"{args}: expected {expected!r} in {r.stderr!r}")
    if re.search(r"\d\.\d*0000\b", r.stderr):  # "3.000000", "0.010000"
        fail(f"{args}: a number printed with %f: {r.stderr!r}")
    print(f"OK {' '.join(args)}: {r.stderr.strip()}")


def bart_dims(base):
    with open(base + ".hdr") as f:
        lines = f.read().splitlines()
    return [int(v) for v in lines[lines.index("# Dimensions") + 1].split()]


def write_cfl(base, dims, values):
    with open(base + ".hdr", "w") as f:
        f.write("# Dimensions\n" + " ".join(str(d) for d in dims) + "\n")
    with open(base + ".cfl", "wb") as f:
        for v in values:
            f.write(struct.pack("<ff", v.real, v.imag))


def main(cli):
    small = ["compare", "--case", "small-2d", "--iterations", "1"]
    expect_refused(cli, small + ["--threads", "0"], "--threads must be between 1 and")
    expect_refused(cli, small + ["--threads", "-5"], "--threads must be between 1 and")
    expect_refused(cli, small + ["--threads", "10000"], "--threads must be between 1 and")
    expect_refused(cli, small + ["--nufft-tolerance", "10"], "--nufft-tolerance must be between 1e-14 and 0.01, got 10")
    expect_refused(cli, small + ["--lambda", "1e300"], "--lambda must be between 0 and 1e+06, got 1e300")
    expect_refused(cli, small + ["--tolerance", "-1"], "--tolerance must be between 0 and 1")
    expect_refused(cli, small + ["--matrix", "48x48"], "--matrix applies to data files")
    expect_refused(cli, ["recon", "--case", "small-2d", "--output", ""], "--output is empty")
    expect_refused(cli, ["recon", "--case", "small-2d", "--gridding-output", ""], "--gridding-output is empty")
    sim = ["simulate", "--kind", "radial-2d", "--n", "32"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.h5")
        expect_refused(cli, sim + ["--readouts", "-1", "--output", out], "--readouts must be between 0 and 1000000")
        expect_refused(cli, sim + ["--readout", "-3", "--output", out], "--readout must be between 0 and 65536")
        expect_refused(cli, sim + ["--readout", "1", "--output", out], "--readout must be 0 (automatic) or at least 2")
        expect_refused(cli, sim + ["--undersampling", "0", "--output", out], "--undersampling must be between 0.01 and 1000")
        expect_refused(cli, sim + ["--output", ""], "--output is empty")
        if os.listdir(tmp):
            fail(f"a refused simulate wrote {os.listdir(tmp)}")

        raw = os.path.join(tmp, "raw")
        if run(cli, "simulate", "--case", "small-2d", "--output", raw + ".cfl").returncode != 0:
            fail("simulate failed")
        bart = ["compare", "--trajectory", raw + "_traj", "--kspace", raw + "_ksp", "--iterations", "1"]
        expect_refused(cli, bart + ["--matrix", "48abcx48"], "--matrix expects NxN or NxNxN with whole numbers")
        expect_refused(cli, bart + ["--matrix", "48x0"], "--matrix sizes must be between 1 and 4096")
        dims = bart_dims(raw + "_traj")
        samples = dims[1] * dims[2]
        write_cfl(os.path.join(tmp, "zero"), [1, dims[1], dims[2]], [0j] * samples)
        expect_refused(cli, bart + ["--density", os.path.join(tmp, "zero")],
                       f"density weights '{os.path.join(tmp, 'zero')}': all zero")
        # Absurd sizes are refused with the estimate and what is available, not std::bad_alloc.
        with open("/proc/meminfo") as f:
            available_kib = int([l.split()[1] for l in f if l.startswith("MemAvailable:")][0])
        if available_kib < 150 * 2**20:  # the estimate for 1024^3 is far above 150 GiB
            expect_refused(cli, bart + ["--matrix", "1024x1024x1024"], "of host memory;")
        # A trajectory in other units (x80): its grid would be 80 times too large.
        traj = raw + "_traj.cfl"
        with open(traj, "rb") as f:
            values = struct.unpack(f"<{os.path.getsize(traj) // 4}f", f.read())
        with open(os.path.join(tmp, "scaled_traj.cfl"), "wb") as f:
            f.write(struct.pack(f"<{len(values)}f", *(80 * v for v in values)))
        with open(raw + "_traj.hdr") as src, open(os.path.join(tmp, "scaled_traj.hdr"), "w") as dst:
            dst.write(src.read())
        expect_refused(cli, ["compare", "--trajectory", os.path.join(tmp, "scaled_traj"), "--kspace", raw + "_ksp"],
                       "likely in other units, scaled by about 80")
        # One k-space sample of 3e38: finite in float32, but its square overflows any sum.
        ksp = raw + "_ksp.cfl"
        with open(ksp, "r+b") as f:
            f.write(struct.pack("<ff", 3e38, 0.0))
        expect_refused(cli, bart, "k-space values reach 3.00000000")


if __name__ == "__main__":
    main(sys.argv[1])
