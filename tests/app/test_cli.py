#!/usr/bin/env python3
"""End-to-end checks of reconstudio-cli: the README's acceptance case, usage errors, Ctrl-C."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def run(cli, *args, timeout=900):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def acceptance(cli):
    # Issue 2's acceptance: 3D Shepp-Logan 64^3, 3D radial 1,024 spokes x 64, noiseless,
    # 60 CG iterations with the case's tuned lambda.
    r = run(cli, "compare", "--json", "--quiet")
    if r.returncode != 0:
        fail(f"compare exited {r.returncode}: {r.stderr}")
    print(r.stdout)
    result = json.loads(r.stdout.strip().splitlines()[-1])
    methods = {m["name"]: m for m in result["methods"]}
    for name in ("gridding-trilinear", "gridding-kb", "iterative"):
        if name not in methods:
            fail(f"method {name} missing from {list(methods)}")
    it, tri, kb = (methods[n]["psnr_db"] for n in ("iterative", "gridding-trilinear", "gridding-kb"))
    if result["case"]["samples"] != 1024 * 64 or result["case"]["grid"] != "64x64x64":
        fail(f"not the acceptance case: {result['case']}")
    if result["iterations"] != 60:
        fail(f"expected 60 CG iterations, got {result['iterations']}")
    if not it >= tri + 4.0:
        fail(f"iterative {it:.2f} dB does not beat trilinear gridding {tri:.2f} dB by 4 dB")
    if not it > kb:
        fail(f"iterative {it:.2f} dB does not beat Kaiser-Bessel gridding {kb:.2f} dB")
    if not result["floor"]["psnr_db"] > tri:
        fail("the Cartesian floor should lie above gridding")
    # 1,024 spokes are 6x below Nyquist at 64^3: Kaiser-Bessel weighs by Pipe-Menon, the
    # seeds' trilinear baseline by the radial ramp (docs/CONVENTIONS.md).
    weights = result["density_weights"]
    if weights != {"gridding-trilinear": "radial-ramp", "gridding-kb": "pipe-menon"}:
        fail(f"unexpected density weights {weights}")
    print(f"OK: iterative {it:.2f} dB, trilinear {tri:.2f} dB, KB {kb:.2f} dB")


def usage(cli):
    r = run(cli, "--version")
    if r.returncode != 0 or "reconstudio-cli" not in r.stdout:
        fail(f"--version: {r.returncode} {r.stdout!r}")
    r = run(cli, "--help")
    if r.returncode != 0 or "compare" not in r.stdout:
        fail("--help does not describe the commands")
    checks = [
        (["frobnicate"], "unknown command"),
        (["compare", "--lambda"], "needs a value"),
        (["compare", "--lambda", "abc"], "expects a number"),
        (["compare", "--bogus"], "unknown option --bogus"),
        (["compare", "--case", "nope"], "unknown demo case 'nope'"),
        (["recon", "--case", "small-2d"], "needs --output"),
        (["compare", "--input", "/nonexistent/file.h5"], "/nonexistent/file.h5"),
        (["compare", "--case", "small-2d", "--regularizer", "l7"], "unknown regulariser"),
        (["compare", "--case", "small-2d", "--coil-combine", "best"], "unknown coil combination 'best'"),
        (["compare", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--coil-maps", "/nonexistent/maps"],
         "/nonexistent/maps"),
        (["compare", "--case", "radial-2d-8coil", "--coil-maps", "espirit"], "not available yet"),
    ]
    for args, expected in checks:
        r = run(cli, *args, timeout=120)
        if r.returncode == 0:
            fail(f"{args} should fail")
        if expected not in r.stderr:
            fail(f"{args}: expected {expected!r} in {r.stderr!r}")
    # A small case end to end, written and re-read by format where the build supports it.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "small.cfl")
        r = run(cli, "recon", "--case", "small-2d", "--iterations", "5", "--output", out, "--quiet", timeout=300)
        if r.returncode != 0 or not os.path.exists(out):
            fail(f"recon --output .cfl: {r.returncode} {r.stderr}")
    print("OK: usage and errors")


def multicoil(cli):
    # 8 synthetic coils, 48 spokes: compare reports SENSE and sum-of-squares rows; SENSE wins.
    r = run(cli, "compare", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--iterations", "30",
            "--no-floor", "--json", "--quiet")
    if r.returncode != 0:
        fail(f"compare exited {r.returncode}: {r.stderr}")
    print(r.stdout)
    result = json.loads(r.stdout.strip().splitlines()[-1])
    methods = {m["name"]: m["psnr_db"] for m in result["methods"]}
    if "iterative-sense" not in methods or "iterative-sos" not in methods:
        fail(f"expected iterative-sense and iterative-sos rows, got {list(methods)}")
    if not methods["iterative-sense"] >= methods["iterative-sos"] + 1.0:
        fail(f"SENSE {methods['iterative-sense']:.2f} dB does not beat sum of squares {methods['iterative-sos']:.2f} dB by 1 dB")
    # Coil compression to 4 virtual coils still reconstructs, and says what it kept.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sense.cfl")
        r = run(cli, "recon", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--virtual-coils", "4",
                "--iterations", "5", "--only", "iterative", "--output", out)
        if r.returncode != 0 or not os.path.exists(out):
            fail(f"recon --virtual-coils 4: {r.returncode} {r.stderr}")
        if "8 coils -> 4 virtual coils" not in r.stderr:
            fail(f"no coil compression report in {r.stderr!r}")
        # Maps from a BART cfl file [x, y, z, coils]: BART's own 8 simulated coils on the case's 128^2 grid.
        if shutil.which("bart"):
            maps = os.path.join(tmp, "maps")
            subprocess.run(["bart", "phantom", "-S", "8", "-x", "128", maps], check=True, capture_output=True)
            r = run(cli, "recon", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--coil-maps", maps,
                    "--iterations", "3", "--only", "iterative", "--quiet", "--output", out)
            if r.returncode != 0:
                fail(f"recon --coil-maps {maps}: {r.returncode} {r.stderr}")
            r = run(cli, "recon", "--case", "small-2d", "--coil-combine", "sense", "--coil-maps", maps,
                    "--iterations", "3", "--only", "iterative", "--quiet", "--output", out)
            if r.returncode == 0 or "expected 48x48x1x1" not in r.stderr:
                fail(f"maps of another grid should be refused by name: {r.stderr!r}")
    print(f"OK: SENSE {methods['iterative-sense']:.2f} dB, sum of squares {methods['iterative-sos']:.2f} dB")


def cancel(cli):
    # SIGINT during CG: the last complete iterate is written, exit code 130.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cancelled.cfl")
        p = subprocess.Popen([cli, "recon", "--case", "radial-2d", "--only", "iterative", "--iterations", "100000",
                              "--output", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(8)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        if p.returncode != 130:
            fail(f"expected exit 130 after Ctrl-C, got {p.returncode}: {err}")
        if "cancelled after" not in err or not os.path.exists(out):
            fail(f"no last iterate written: {err}")
    print("OK: cancel")


def sparse(cli):
    # A sparse prior on the small 2D case: the JSON row is named by the prior and carries its lambda,
    # and TV beats the case's quadratic result.
    quad = run(cli, "compare", "--case", "small-2d", "--iterations", "200", "--json", "--quiet", "--no-floor")
    r = run(cli, "compare", "--case", "small-2d", "--regularizer", "tv", "--iterations", "200", "--json", "--quiet",
            "--no-floor")
    if quad.returncode != 0 or r.returncode != 0:
        fail(f"compare exited {quad.returncode}/{r.returncode}: {quad.stderr} {r.stderr}")
    result = json.loads(r.stdout.strip().splitlines()[-1])
    methods = {m["name"]: m for m in result["methods"]}
    if "iterative-tv" not in methods:
        fail(f"no iterative-tv row in {list(methods)}")
    if methods["iterative-tv"]["lambda"] != 0.1 or result["regularizer"] != "tv":
        fail(f"the TV row's lambda or the regulariser is wrong: {methods['iterative-tv']}, {result['regularizer']}")
    q = {m["name"]: m for m in json.loads(quad.stdout.strip().splitlines()[-1])["methods"]}["iterative"]["psnr_db"]
    if not methods["iterative-tv"]["psnr_db"] > q + 3:
        fail(f"TV {methods['iterative-tv']['psnr_db']:.2f} dB does not beat the quadratic {q:.2f} dB by 3 dB")
    # The wavelet prior goes to FISTA; --lambda auto prints its choice and the rule, and the JSON carries both.
    w = run(cli, "compare", "--case", "small-2d", "--regularizer", "wavelet", "--lambda", "auto", "--iterations", "150",
            "--json", "--quiet", "--no-floor")
    if w.returncode != 0:
        fail(f"compare --lambda auto exited {w.returncode}: {w.stderr}")
    wj = json.loads(w.stdout.strip().splitlines()[-1])
    if wj["solver"] != "fista" or "lambda auto:" not in w.stderr or "x m" not in (wj["lambda_rule"] or ""):
        fail(f"expected FISTA and a printed auto lambda with its rule: {wj['solver']}, {w.stderr}, {wj['lambda_rule']}")
    wrow = {m["name"]: m for m in wj["methods"]}["iterative-wavelet"]
    if abs(wrow["lambda"] - wj["lambda"]) > 1e-12 or not wrow["psnr_db"] > q + 3:
        fail(f"the wavelet row at the auto lambda {wj['lambda']}: {wrow}, quadratic {q:.2f} dB")
    for bad in (["--regularizer", "tv", "--wavelet", "sym8"], ["--regularizer", "tv", "--admm-inner", "0"],
                ["--regularizer", "total"], ["--regularizer", "tv", "--sparse-solver", "fista"],
                ["--regularizer", "wavelet", "--wavelet-shifts", "maybe"], ["--lambda", "automatic"]):
        b = run(cli, "compare", "--case", "small-2d", "--quiet", *bad)
        if b.returncode == 0 or not b.stderr.strip():
            fail(f"{bad} should be refused with a message, got {b.returncode}: {b.stderr}")


if __name__ == "__main__":
    {"acceptance": acceptance, "usage": usage, "cancel": cancel, "sparse": sparse, "multicoil": multicoil}[sys.argv[1]](sys.argv[2])
