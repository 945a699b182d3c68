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
        (["compare", "--case", "small-2d", "--preconditioner", "jacobi"], "unknown preconditioner 'jacobi'"),
        (["compare", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--coil-maps", "/nonexistent/maps"],
         "/nonexistent/maps"),
        (["compare", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--coil-maps", "esprit"],
         "espirit, walsh, lowres or a BART cfl file"),
        (["compare", "--case", "small-2d", "--backend", "cpu", "--gpus", "0"], "--gpus needs the CUDA backend"),
        # With or without a GPU the message names the option and its value.
        (["compare", "--case", "small-2d", "--gpus", "0,x"], "--gpus 0,x"),
        (["compare", "--case", "small-2d", "--gpus", "0,999"], "--gpus 0,999:"),
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
    # The default maps (ESPIRiT) against the other estimates: Walsh about as good, low-resolution
    # maps clearly worse (measured at 30 iterations: 31.11, 31.10 and 26.63 dB).
    sense = {"espirit": methods["iterative-sense"]}
    for maps in ("walsh", "lowres"):
        r = run(cli, "compare", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--coil-maps", maps,
                "--iterations", "30", "--no-floor", "--json", "--quiet")
        if r.returncode != 0:
            fail(f"compare --coil-maps {maps} exited {r.returncode}: {r.stderr}")
        rows = {m["name"]: m["psnr_db"] for m in json.loads(r.stdout.strip().splitlines()[-1])["methods"]}
        sense[maps] = rows["iterative-sense"]
    print("SENSE by coil maps:", sense)
    if not (sense["espirit"] >= sense["lowres"] + 2.0 and sense["walsh"] >= sense["lowres"] + 2.0):
        fail(f"ESPIRiT and Walsh maps should beat low-resolution maps by 2 dB: {sense}")
    # Coil compression to 4 virtual coils still reconstructs, and says what it kept.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sense.cfl")
        r = run(cli, "recon", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--virtual-coils", "4",
                "--iterations", "5", "--only", "iterative", "--output", out)
        if r.returncode != 0 or not os.path.exists(out):
            fail(f"recon --virtual-coils 4: {r.returncode} {r.stderr}")
        if "8 coils -> 4 virtual coils" not in r.stderr:
            fail(f"no coil compression report in {r.stderr!r}")
        # The maps a SENSE solve used, written as BART cfl [x, y, z, coils] and read back as --coil-maps FILE.
        used = os.path.join(tmp, "used_maps")
        r = run(cli, "recon", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--iterations", "3", "--only",
                "iterative", "--quiet", "--output", out, "--coil-maps-output", used)
        if r.returncode != 0 or not os.path.exists(used + ".cfl"):
            fail(f"recon --coil-maps-output: {r.returncode} {r.stderr}")
        with open(used + ".hdr") as f:
            dims = f.read().splitlines()[1].split()
        if dims[:4] != ["128", "128", "1", "8"] or os.path.getsize(used + ".cfl") != 128 * 128 * 8 * 8:
            fail(f"--coil-maps-output wrote dims {dims}, {os.path.getsize(used + '.cfl')} bytes")
        r = run(cli, "recon", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--coil-maps", used,
                "--iterations", "3", "--only", "iterative", "--quiet", "--output", out)
        if r.returncode != 0:
            fail(f"recon --coil-maps (its own maps): {r.returncode} {r.stderr}")
        r = run(cli, "recon", "--case", "radial-2d-8coil", "--iterations", "3", "--quiet", "--output", out,
                "--coil-maps-output", os.path.join(tmp, "none"))
        if r.returncode == 0 or "--coil-maps-output needs --coil-combine sense" not in r.stderr:
            fail(f"--coil-maps-output without SENSE should be refused: {r.returncode} {r.stderr!r}")
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
    # SENSE with a sparse prior: rows named by the combination and the prior, SENSE + TV ahead of SENSE
    # with the quadratic prior above and of coil-by-coil TV (measured at 100 iterations, lambda 0.3:
    # 36.06 and 30.75 dB, SENSE fd at 30 iterations 31.21 dB).
    r = run(cli, "compare", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--regularizer", "tv", "--lambda", "0.3",
            "--iterations", "100", "--no-floor", "--json", "--quiet")
    if r.returncode != 0:
        fail(f"compare --coil-combine sense --regularizer tv exited {r.returncode}: {r.stderr}")
    tv = {m["name"]: m["psnr_db"] for m in json.loads(r.stdout.strip().splitlines()[-1])["methods"]}
    if "iterative-sense-tv" not in tv or "iterative-sos-tv" not in tv:
        fail(f"expected iterative-sense-tv and iterative-sos-tv rows, got {list(tv)}")
    if not (tv["iterative-sense-tv"] >= methods["iterative-sense"] + 2.0 and tv["iterative-sense-tv"] >= tv["iterative-sos-tv"] + 2.0):
        fail(f"SENSE + TV {tv['iterative-sense-tv']:.2f} dB should beat SENSE fd {methods['iterative-sense']:.2f} dB "
             f"and coil-by-coil TV {tv['iterative-sos-tv']:.2f} dB by 2 dB")
    # ... and Ctrl-C during its ADMM writes the last complete iterate, exit code 130.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cancelled.cfl")
        p = subprocess.Popen([cli, "recon", "--case", "radial-2d-8coil", "--coil-combine", "sense", "--regularizer", "tv",
                              "--only", "iterative", "--iterations", "100000", "--output", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Ctrl-C once the ADMM steps have begun (the maps and Q before them take a while on a loaded machine).
        seen, start = b"", time.time()
        while b"ADMM step" not in seen and time.time() - start < 180:
            chunk = os.read(p.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        _, rest = p.communicate(timeout=120)
        err = (seen + rest).decode(errors="replace")
        if p.returncode != 130 or "cancelled after" not in err or not os.path.exists(out):
            fail(f"SENSE + TV: expected exit 130 and the last iterate after Ctrl-C, got {p.returncode}: {err}")
    print(f"OK: SENSE {methods['iterative-sense']:.2f} dB, sum of squares {methods['iterative-sos']:.2f} dB, "
          f"SENSE + TV {tv['iterative-sense-tv']:.2f} dB, coil-by-coil TV {tv['iterative-sos-tv']:.2f} dB")


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
    # The wavelet prior goes to POGM; --lambda auto prints its choice and the rule, and the JSON carries both.
    w = run(cli, "compare", "--case", "small-2d", "--regularizer", "wavelet", "--lambda", "auto", "--iterations", "150",
            "--json", "--quiet", "--no-floor")
    if w.returncode != 0:
        fail(f"compare --lambda auto exited {w.returncode}: {w.stderr}")
    wj = json.loads(w.stdout.strip().splitlines()[-1])
    if wj["solver"] != "pogm" or "lambda auto:" not in w.stderr or "x m" not in (wj["lambda_rule"] or ""):
        fail(f"expected POGM and a printed auto lambda with its rule: {wj['solver']}, {w.stderr}, {wj['lambda_rule']}")
    wrow = {m["name"]: m for m in wj["methods"]}["iterative-wavelet"]
    if abs(wrow["lambda"] - wj["lambda"]) > 1e-12 or not wrow["psnr_db"] > q + 3:
        fail(f"the wavelet row at the auto lambda {wj['lambda']}: {wrow}, quadratic {q:.2f} dB")
    # --priors: a sum, each term with its own lambda and TV norm; the row carries the first term's lambda.
    both = run(cli, "compare", "--case", "small-2d", "--priors", "tv:0.03,tv-anisotropic:0.05", "--iterations", "100",
               "--json", "--quiet", "--no-floor")
    if both.returncode != 0:
        fail(f"compare --priors exited {both.returncode}: {both.stderr}")
    bj = json.loads(both.stdout.strip().splitlines()[-1])
    brow = {m["name"]: m for m in bj["methods"]}["iterative-tv"]
    if bj["solver"] != "admm" or brow["lambda"] != 0.03 or not brow["psnr_db"] > q + 3:
        fail(f"the sum of TV terms: {bj['solver']}, {brow}, quadratic {q:.2f} dB")
    for bad in (["--priors", "tv"], ["--priors", "fd:0.1"], ["--priors", "tv:-1"], ["--priors", "tv:0.1x"],
                ["--priors", "tv:0.1", "--lambda", "0.2"], ["--priors", "tv:0.1", "--regularizer", "tv"], ["--priors", ""],
                ["--regularizer", "tv", "--wavelet", "sym8"], ["--regularizer", "tv", "--admm-inner", "0"],
                ["--regularizer", "total"], ["--regularizer", "tv", "--sparse-solver", "fista"],
                ["--regularizer", "tv", "--sparse-solver", "pogm"], ["--regularizer", "wavelet", "--sparse-solver", "ogm"],
                ["--regularizer", "wavelet", "--wavelet-shifts", "maybe"], ["--lambda", "automatic"],
                ["--regularizer", "tv", "--admm-rho", "fast"], ["--regularizer", "tv", "--admm-relaxation", "2"],
                ["--regularizer", "tv", "--admm-preconditioner", "ilu"],
                ["--regularizer", "tv", "--sparse-solver", "pdhg", "--pdhg-preconditioner", "circulant"],
                ["--regularizer", "tv", "--sparse-solver", "pdhg", "--pdhg-sigma", "0"],
                ["--regularizer", "tv", "--sparse-solver", "pdhg", "--data-weighting", "density"]):
        b = run(cli, "compare", "--case", "small-2d", "--quiet", *bad)
        if b.returncode == 0 or not b.stderr.strip():
            fail(f"{bad} should be refused with a message, got {b.returncode}: {b.stderr}")


def read_cfl(stem):
    """A BART array: dims from the .hdr, complex64 values from the .cfl."""
    import array
    with open(stem + ".hdr") as f:
        dims = [int(x) for x in f.read().split("\n")[1].split()]
    values = array.array("f")
    with open(stem + ".cfl", "rb") as f:
        values.frombytes(f.read())
    return dims, values


def run_until(args, pattern, pause):
    """Runs the CLI on a pseudo-terminal (so it prints its phases), sends SIGINT `pause`
    seconds after `pattern` first appears; returns (exit code, output, seconds from the
    signal to the exit)."""
    import pty
    import re
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=slave, stderr=slave)
    os.close(slave)
    out, signalled = b"", None
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if signalled is None and re.search(pattern, out.decode(errors="replace")):
            time.sleep(pause)
            p.send_signal(signal.SIGINT)
            signalled = time.monotonic()
    p.wait(timeout=300)
    os.close(master)
    text = out.decode(errors="replace").replace("\r", "\n")
    if signalled is None:
        fail(f"the run ended (exit {p.returncode}) before {pattern!r} appeared: {text[-2000:]}")
    return p.returncode, text, time.monotonic() - signalled


def cancel_gridding(cli):
    # Item 6: Ctrl-C during the 128^3 stages before CG (Pipe-Menon density weights, Q's
    # FFT) stops within seconds, writes exactly the complete images, says which, and
    # leaves no partial file. 5 s is a correctness bound (these stages ran 13-18 s on).
    bound = 5.0
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "kooshball.h5")
        r = run(cli, "simulate", "--kind", "radial-3d", "--n", "128", "--readouts", "1000", "--output", data, "--quiet")
        if r.returncode != 0:
            fail(f"simulate: {r.stderr}")
        ref = os.path.join(tmp, "ref")
        r = run(cli, "recon", "--input", data, "--only", "gridding-kb", "--gridding-output", ref + ".cfl", "--quiet")
        if r.returncode != 0:
            fail(f"the uncancelled gridding: {r.stderr}")

        def recon(folder):
            os.mkdir(folder)
            return [cli, "recon", "--input", data, "--output", os.path.join(folder, "it.cfl"),
                    "--gridding-output", os.path.join(folder, "kb.cfl"), "--report", os.path.join(folder, "r.json")]

        # During Kaiser-Bessel gridding's density weights: only the report is complete.
        a = os.path.join(tmp, "a")
        code, out, late = run_until(recon(a), r"density weights +[1-9]", 0.3)
        if code != 130 or late > bound:
            fail(f"Ctrl-C in Pipe-Menon: exit {code} {late:.1f} s after the signal (expected 130 within {bound} s): {out[-1500:]}")
        said = f"cancelled during Kaiser-Bessel gridding: wrote {a}/r.json; not written: {a}/it.cfl (--output: the iterative " \
               f"image was not complete), {a}/kb.cfl (--gridding-output: the gridding-kb image was not complete)"
        if said not in out:
            fail(f"Ctrl-C in Pipe-Menon: expected {said!r} in {out[-1500:]!r}")
        if sorted(os.listdir(a)) != ["r.json"]:
            fail(f"Ctrl-C in Pipe-Menon left {sorted(os.listdir(a))}, expected only r.json")
        with open(os.path.join(a, "r.json")) as f:
            if json.load(f)["cancelled"] is not True:
                fail("the report does not say cancelled")

        # During Q (after both griddings; the signal lands in its FFT, which starts after the
        # spreading's 40 %): the Kaiser-Bessel image is written, equal to the uncancelled one; the
        # iterative image is not.
        b = os.path.join(tmp, "b")
        code, out, late = run_until(recon(b), r"Q +[1-9]", 0.05)
        if code != 130 or late > bound:
            fail(f"Ctrl-C in Q: exit {code} {late:.1f} s after the signal (expected 130 within {bound} s): {out[-1500:]}")
        said = f"cancelled during the iterative reconstruction, before its first iteration: wrote {b}/kb.cfl, {b}/r.json; " \
               f"not written: {b}/it.cfl (--output: the iterative image was not complete)"
        if said not in out:
            fail(f"Ctrl-C in Q: expected {said!r} in {out[-1500:]!r}")
        if sorted(os.listdir(b)) != ["kb.cfl", "kb.hdr", "r.json"]:
            fail(f"Ctrl-C in Q left {sorted(os.listdir(b))}, expected kb.cfl, kb.hdr, r.json")
        dims, got = read_cfl(os.path.join(b, "kb"))
        rdims, want = read_cfl(ref)
        if dims[:3] != [128, 128, 128] or dims != rdims or len(got) != 2 * 128 ** 3:
            fail(f"the written gridding image has dims {dims}, {len(got)} floats (reference {rdims})")
        diff = max(abs(x - y) for x, y in zip(got, want))
        peak = max(abs(y) for y in want)
        if not peak > 0 or not diff <= 1e-6 * peak:
            fail(f"the written gridding image differs from the uncancelled one by {diff} (peak {peak})")

        # While simulating (the analytic k-space at 128^3, seconds of work holding nothing to keep):
        # Ctrl-C leaves at once, says so, and writes no file.
        c = os.path.join(tmp, "c.h5")
        p = subprocess.Popen([cli, "simulate", "--kind", "radial-3d", "--n", "128", "--readouts", "1000", "--output", c],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        err = p.communicate(timeout=60)[1]
        late = time.monotonic() - signalled
        if p.returncode != 130 or late > bound or "cancelled while simulating the data set; nothing written" not in err:
            fail(f"Ctrl-C while simulating: exit {p.returncode} {late:.1f} s after the signal: {err[-800:]!r}")
        if any(name.startswith("c.h5") or name.startswith(".c.h5") for name in os.listdir(tmp)):
            fail(f"Ctrl-C while simulating left {sorted(os.listdir(tmp))}")
        print(f"OK: Ctrl-C while simulating, in Pipe-Menon and in Q: exit 130 within {bound} s, complete images written")


if __name__ == "__main__":
    {"acceptance": acceptance, "usage": usage, "cancel": cancel, "cancel_gridding": cancel_gridding, "sparse": sparse, "multicoil": multicoil}[sys.argv[1]](sys.argv[2])
