#!/usr/bin/env python3
"""reconstudio-cli recon --recipe and batch, end to end on small simulated data sets.

  test_batch.py recipe CLI   recon --recipe: same image as the options typed; bad recipes named
  test_batch.py local CLI    batch --engine local: order, -j bounds, damaged row, resume, recipe change
  test_batch.py slurm CLI    batch --engine slurm on a real Slurm started here (tests/app/slurm_cluster.py)
"""
import csv
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77  # ctest's SKIP_RETURN_CODE for this script


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(cli, *args, timeout=600, env=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout, env=env)


def must(result, what):
    if result.returncode != 0:
        fail(f"{what} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def read_cfl(base):
    """A BART .cfl as a list of complex numbers (float32 pairs)."""
    with open(base + ".cfl", "rb") as f:
        raw = f.read()
    values = struct.unpack(f"<{len(raw) // 4}f", raw)
    return [complex(values[i], values[i + 1]) for i in range(0, len(values), 2)]


def assert_same_image(a, b, what, rel=1e-4):
    x, y = read_cfl(a), read_cfl(b)
    if len(x) != len(y):
        fail(f"{what}: {len(x)} vs {len(y)} voxels")
    scale = max(abs(v) for v in y)
    worst = max(abs(p - q) for p, q in zip(x, y))
    if not scale > 0 or worst > rel * scale:
        fail(f"{what}: images differ by {worst:.3g} (max |image| {scale:.3g})")
    return worst / scale


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def simulate(cli, tmp):
    """Three small data sets of different durations and one damaged file."""
    inputs = os.path.join(tmp, "in")
    os.makedirs(inputs)
    must(run(cli, "simulate", "--case", "radial-2d", "--output", f"{inputs}/b_big.h5", "--quiet"), "simulate")
    must(run(cli, "simulate", "--case", "small-2d", "--output", f"{inputs}/c_small.h5", "--quiet"), "simulate")
    must(run(cli, "simulate", "--case", "radial-2d-noisy", "--output", f"{inputs}/d_noisy.h5", "--quiet"), "simulate")
    with open(f"{inputs}/b_big.h5", "rb") as f:
        head = f.read(4096)
    with open(f"{inputs}/a_damaged.h5", "wb") as f:
        f.write(head)  # a truncated HDF5 file: libhdf5 cannot open it
    return inputs


RECIPE = {"reconstudio_recipe": 1, "regularizer": "fd", "lambda": 0.5, "iterations": 15, "backend": "cpu",
          "output": {"format": "cfl"}}


def summary(outdir):
    with open(os.path.join(outdir, "summary.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(outdir, "summary.json")) as f:
        js = json.load(f)
    if [r["status"] for r in rows] != [r["status"] for r in js["rows"]]:
        fail("summary.csv and summary.json disagree")
    return rows, js


# ------------------------------------------------------------------ recipe

def recipe_checks(cli):
    with tempfile.TemporaryDirectory() as tmp:
        r = os.path.join(tmp, "r.json")
        write(r, json.dumps(RECIPE))
        env = dict(os.environ, OMP_NUM_THREADS="1")
        must(run(cli, "recon", "--case", "small-2d", "--recipe", r, "--output", f"{tmp}/by_recipe.cfl", "--quiet",
                 env=env), "recon --recipe")
        must(run(cli, "recon", "--case", "small-2d", "--regularizer", "fd", "--lambda", "0.5", "--iterations", "15",
                 "--backend", "cpu", "--output", f"{tmp}/typed.cfl", "--quiet", env=env), "recon typed")
        with open(f"{tmp}/by_recipe.cfl", "rb") as a, open(f"{tmp}/typed.cfl", "rb") as b:
            if a.read() != b.read():
                fail("recon --recipe and the same options typed give different images")
        # The data term (issue 17): a recipe's data_weighting is --data-weighting typed, another image.
        dw = os.path.join(tmp, "dw.json")
        write(dw, json.dumps(dict(RECIPE, data_weighting="density")))
        must(run(cli, "recon", "--case", "small-2d", "--recipe", dw, "--output", f"{tmp}/dw_recipe.cfl", "--quiet",
                 env=env), "recon --recipe with data_weighting density")
        must(run(cli, "recon", "--case", "small-2d", "--regularizer", "fd", "--lambda", "0.5", "--iterations", "15",
                 "--backend", "cpu", "--data-weighting", "density", "--output", f"{tmp}/dw_typed.cfl", "--quiet",
                 env=env), "recon --data-weighting density")
        with open(f"{tmp}/dw_recipe.cfl", "rb") as a, open(f"{tmp}/dw_typed.cfl", "rb") as b:
            if a.read() != b.read():
                fail("a recipe's data_weighting density and --data-weighting density typed give different images")
        with open(f"{tmp}/dw_recipe.cfl", "rb") as a, open(f"{tmp}/by_recipe.cfl", "rb") as b:
            if a.read() == b.read():
                fail("data_weighting density wrote the least-squares image")
        # An option typed on the command line wins over the recipe's.
        must(run(cli, "recon", "--case", "small-2d", "--recipe", r, "--iterations", "3", "--output",
                 f"{tmp}/three.cfl", "--report", f"{tmp}/three.json", "--quiet", env=env), "recon override")
        with open(f"{tmp}/three.json") as f:
            if json.load(f)["iterations"] != 3:
                fail("--iterations typed after --recipe did not win")
        # Bad recipes: a clear message naming file and field, non-zero exit, nothing written.
        cases = [
            ('{"reconstudio_recipe": 1, "lamda": 2}', "unknown key 'lamda'"),
            ('{"reconstudio_recipe": 1, "lambda": -2}', "'lambda'"),
            ('{"reconstudio_recipe": 1, "lambda": "automatic"}', "must be a number or \"auto\""),
            ('{"reconstudio_recipe": 9}', "reads version 1"),
            ('{"reconstudio_recipe": 1, "regularizer": "lasso"}', "'regularizer'"),
            ('{"reconstudio_recipe": 1, "data_weighting": "jackson"}', "'data_weighting'"),
            ('{"reconstudio_recipe": 1,', "not valid JSON"),
        ]
        for text, expected in cases:
            bad = os.path.join(tmp, "bad.json")
            write(bad, text)
            out = os.path.join(tmp, "never.cfl")
            res = run(cli, "recon", "--case", "small-2d", "--recipe", bad, "--output", out, "--quiet")
            if res.returncode == 0 or expected not in res.stderr or bad not in res.stderr:
                fail(f"recipe {text!r}: exit {res.returncode}, expected {expected!r} and the file in {res.stderr!r}")
            if os.path.exists(out):
                fail(f"recipe {text!r}: an output was written")
        # "lambda": "auto" reconstructs as --lambda auto typed does, and a batch chooses it per data set.
        auto = os.path.join(tmp, "auto.json")
        write(auto, json.dumps(dict(RECIPE, regularizer="tv", **{"lambda": "auto"})))
        must(run(cli, "recon", "--case", "small-2d", "--recipe", auto, "--output", f"{tmp}/auto_recipe.cfl",
                 "--report", f"{tmp}/auto_recipe.json", "--quiet", env=env), "recon --recipe with lambda auto")
        typed = run(cli, "recon", "--case", "small-2d", "--regularizer", "tv", "--lambda", "auto", "--iterations", "15",
                    "--backend", "cpu", "--output", f"{tmp}/auto_typed.cfl", "--quiet", env=env)
        must(typed, "recon --lambda auto typed")
        with open(f"{tmp}/auto_recipe.cfl", "rb") as a, open(f"{tmp}/auto_typed.cfl", "rb") as b:
            if a.read() != b.read():
                fail("a recipe's lambda auto and --lambda auto typed give different images")
        with open(f"{tmp}/auto_recipe.json") as f:
            chosen = json.load(f)["lambda"]
        if f"lambda auto: {chosen:.4g} x s" not in typed.stderr:
            fail(f"the report's lambda {chosen} is not the one --lambda auto chose: {typed.stderr!r}")
        inputs = os.path.join(tmp, "in")
        os.makedirs(inputs)
        for case in ("small-2d", "radial-2d"):
            must(run(cli, "simulate", "--case", case, "--output", f"{inputs}/{case}.h5", "--quiet"), "simulate")
        must(run(cli, "batch", "--recipe", auto, "--manifest", inputs, "--output-dir", f"{tmp}/auto_batch", "-j", "1",
                 env=env), "batch with lambda auto")
        rows, js = summary(f"{tmp}/auto_batch")
        if [r["status"] for r in rows] != ["ok", "ok"]:
            fail(f"batch with lambda auto: {rows}")
        with open(f"{tmp}/auto_batch/recipe.json") as f:
            if json.load(f)["lambda"] != "auto":
                fail("the batch's copy of the recipe lost lambda auto")
        res = run(cli, "recon", "--case", "small-2d", "--recipe", f"{tmp}/missing.json", "--output", f"{tmp}/x.cfl")
        if res.returncode == 0 or "missing.json" not in res.stderr:
            fail(f"a missing recipe is not named: {res.stderr!r}")
    print("OK: recipe")


# ------------------------------------------------------------------ local engine

def local_checks(cli):
    with tempfile.TemporaryDirectory() as tmp:
        inputs = simulate(cli, tmp)
        r = os.path.join(tmp, "r.json")
        write(r, json.dumps(RECIPE))
        env = dict(os.environ, OMP_NUM_THREADS="1")

        # -j bounds and bad arguments: refused before anything is written.
        for args, expected in [(["-j", "0"], "-j expects between 1 and 256"), (["-j", "999"], "-j expects"),
                               (["-j", "x"], "expects an integer"), (["--engine", "cloud"], "--engine expects"),
                               (["--manifest", f"{tmp}/nothing-*.h5"], "matches no file")]:
            base = ["batch", "--recipe", r, "--manifest", inputs, "--output-dir", f"{tmp}/refused"]
            if args[0] == "--manifest":
                base[4] = args[1]
                args = []
            res = run(cli, *base, *args)
            if res.returncode == 0 or expected not in res.stderr:
                fail(f"batch {args}: exit {res.returncode}, expected {expected!r} in {res.stderr!r}")
            if os.path.exists(f"{tmp}/refused/batch.json"):
                fail(f"batch {args}: wrote a plan although refused")
        # --engine slurm where sbatch is missing: said before anything is written.
        res = run(cli, "batch", "--engine", "slurm", "--recipe", r, "--manifest", inputs, "--output-dir",
                  f"{tmp}/refused", env=dict(os.environ, PATH="/nonexistent"))
        if res.returncode == 0 or "'sbatch' not found" not in res.stderr or os.path.exists(f"{tmp}/refused"):
            fail(f"--engine slurm without sbatch: exit {res.returncode}, {res.stderr!r}")
        write(f"{tmp}/badcol.csv", "input,lamda\nin/b_big.h5,3\n")
        res = run(cli, "batch", "--recipe", r, "--manifest", f"{tmp}/badcol.csv", "--output-dir", f"{tmp}/refused")
        if res.returncode == 0 or "column 'lamda'" not in res.stderr:
            fail(f"an unknown manifest column is not named: {res.stderr!r}")
        write(f"{tmp}/badval.csv", "input,lambda\nin/b_big.h5,-3\n")
        res = run(cli, "batch", "--recipe", r, "--manifest", f"{tmp}/badval.csv", "--output-dir", f"{tmp}/refused")
        if res.returncode == 0 or "data set 1" not in res.stderr or "'lambda'" not in res.stderr:
            fail(f"a bad per-row value is not named: {res.stderr!r}")

        # A CSV manifest not in alphabetical order, with a per-row override: the summary
        # keeps the manifest's order whatever order the workers finish in.
        write(f"{tmp}/m.csv", "input,iterations\nin/d_noisy.h5,\nin/c_small.h5,4\nin/a_damaged.h5,\nin/b_big.h5,\n")
        out = f"{tmp}/out2"
        res = run(cli, "batch", "--recipe", r, "--manifest", f"{tmp}/m.csv", "--output-dir", out, "-j", "2", env=env)
        if res.returncode != 1:
            fail(f"a batch with a damaged row should exit 1, got {res.returncode}: {res.stderr}")
        rows, js = summary(out)
        names = [os.path.basename(x["input"]) for x in rows]
        if names != ["d_noisy.h5", "c_small.h5", "a_damaged.h5", "b_big.h5"]:
            fail(f"summary not in manifest order: {names}")
        status = {os.path.basename(x["input"]): x for x in rows}
        if status["a_damaged.h5"]["status"] != "failed" or "a_damaged.h5" not in status["a_damaged.h5"]["message"]:
            fail(f"the damaged row: {status['a_damaged.h5']}")
        for name in ("d_noisy.h5", "c_small.h5", "b_big.h5"):
            if status[name]["status"] != "ok" or not float(status[name]["psnr_db"]) > 15 \
                    or not float(status[name]["cpu_seconds"]) > 0:
                fail(f"{name}: {status[name]}")
        if status["c_small.h5"]["iterations"] != "4" or status["b_big.h5"]["iterations"] != "15":
            fail("the per-row iterations override was not applied to that row only")
        if js["counts"] != {"ok": 3, "failed": 1, "pending": 0}:
            fail(f"counts {js['counts']}")
        # -j 2 ran two at a time, never more.
        spans = []
        for name in ("d_noisy", "c_small", "a_damaged", "b_big"):
            with open(f"{out}/results/{name}.json") as f:
                rec = json.load(f)
            spans.append((rec["started"], rec["finished"]))
        overlap = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
        if overlap != 2:
            fail(f"-j 2 ran {overlap} reconstructions at once")
        # Each output equals a direct recon run with the same recipe.
        must(run(cli, "recon", "--recipe", r, "--input", f"{inputs}/b_big.h5", "--output", f"{tmp}/direct.cfl",
                 "--quiet", env=env), "direct recon")
        worst = assert_same_image(f"{out}/b_big", f"{tmp}/direct", "batch vs direct recon")
        leftovers = [f for f in os.listdir(out) if ".part-" in f]
        if leftovers:
            fail(f"temporary files left: {leftovers}")
        print(f"OK: order, damaged row, override, -j 2 overlap {overlap}, batch = direct recon (rel. diff {worst:.1e})")

        # Resume: stop a -j 1 batch after its first row; the re-run skips what is complete.
        out = f"{tmp}/out1"
        args = ["batch", "--recipe", r, "--manifest", inputs, "--output-dir", out, "-j", "1"]
        proc = subprocess.Popen([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 120
        # Its first row (the damaged file) fails at once: stop while the others run or wait. Waiting for a
        # later row let the small ones finish in the polling gap once reconstructions became fast.
        while time.time() < deadline and not os.path.exists(f"{out}/results/a_damaged.json"):
            time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 130:
            fail(f"a stopped batch should exit 130, got {proc.returncode}: {err}")
        rows, _ = summary(out)
        done = [x for x in rows if x["status"] != "pending"]
        if not rows[-1]["status"] == "pending" or not done:
            fail(f"after the stop: {[x['status'] for x in rows]}")
        before = {}
        for x in rows:
            if x["status"] == "ok":
                name = os.path.splitext(os.path.basename(x["input"]))[0]
                before[name] = os.stat(f"{out}/results/{name}.json").st_mtime_ns
        res = run(cli, *args, env=env)
        rows, _ = summary(out)
        if [x["status"] for x in rows] != ["failed", "ok", "ok", "ok"]:
            fail(f"after resume: {[x['status'] for x in rows]}")
        expected = f"{4 - len(before)} of 4 data sets to reconstruct ({len(before)} complete"
        if expected not in res.stderr:
            fail(f"resume did not skip the complete rows: {res.stderr}")
        for name, mtime in before.items():
            if os.stat(f"{out}/results/{name}.json").st_mtime_ns != mtime:
                fail(f"{name} was reconstructed again although complete")
        # A changed recipe changes the hash: every row runs again.
        write(r, json.dumps(dict(RECIPE, **{"lambda": 0.25})))
        res = run(cli, *args, env=env)
        if "4 of 4 data sets to reconstruct" not in res.stderr:
            fail(f"a changed recipe did not re-run every row: {res.stderr}")
        # A removed output is noticed: that row runs again, and the temporary a killed
        # writer would have left behind is cleared.
        os.remove(f"{out}/c_small.cfl")
        write(f"{out}/.c_small.part-99999-0.cfl", "half an image")
        res = run(cli, *args, env=env)
        if "2 of 4 data sets to reconstruct (2 complete" not in res.stderr or not os.path.exists(f"{out}/c_small.cfl"):
            fail(f"a missing output was not reconstructed again: {res.stderr}")
        if os.path.exists(f"{out}/.c_small.part-99999-0.cfl"):
            fail("a stale temporary of the re-run row was left")
        print(f"OK: resume after a stop (skipped {sorted(before)}), recipe change, missing output")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    mode, cli = sys.argv[1], os.path.abspath(sys.argv[2])
    if mode == "recipe":
        recipe_checks(cli)
    elif mode == "local":
        local_checks(cli)
    elif mode == "slurm":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import slurm_cluster
        return slurm_cluster.main(cli, sys.modules[__name__])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
