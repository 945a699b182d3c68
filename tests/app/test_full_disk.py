#!/usr/bin/env python3
"""The command line on a full disk: `recon --output` fails with exit 1 and a message naming the
file and the reason, and leaves the previous file byte for byte as it was, with no temporary left.

  shim   every output format, the disk "full" through tests/support/enospc_shim.c (LD_PRELOAD)
  tmpfs  a real full file system: a small tmpfs mounted by the test (needs root; else skipped, 77)
  dicom  `recon --format dicom` through the shim: no folder, no temporary, the output named
  batch  `batch status` rewriting summary.csv/.json through the shim: the old pair kept, together
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
FORMATS = [".nii.gz", ".nii", ".h5", ".mrd", ".cfl", ".png"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def recon(cli, output, env=None):
    args = [cli, "recon", "--case", "small-2d", "--iterations", "3", "--only", "iterative", "--output", output,
            "--quiet"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)


def snapshot(folder):
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    return files


def expect_refused(r, output, folder, before, what):
    if r.returncode != 1:
        fail(f"{what}: exit {r.returncode}, expected 1; stderr: {r.stderr!r}")
    # The file that failed: the output itself, or for BART its .hdr beside the .cfl.
    stem = output[: -len(".nii.gz")] if output.endswith(".nii.gz") else os.path.splitext(output)[0]
    if "No space left on device" not in r.stderr or f"'{stem}." not in r.stderr:
        fail(f"{what}: the message does not name the file and the reason: {r.stderr!r}")
    if snapshot(folder) != before:
        fail(f"{what}: the previous file changed or a temporary was left: {sorted(snapshot(folder))}")


def shim(cli, library):
    for ext in FORMATS:
        with tempfile.TemporaryDirectory() as tmp:
            output = os.path.join(tmp, "keep" + ext)
            r = recon(cli, output)
            if r.returncode != 0:
                if "names no format this build writes" in r.stderr:
                    print(f"{ext}: not in this build")
                    continue
                fail(f"{ext}: the first write failed: {r.stderr}")
            before = snapshot(tmp)
            size = sum(len(b) for b in before.values())
            for budget in (0, size // 2, size - 1):
                env = dict(os.environ, LD_PRELOAD=library, RECONSTUDIO_ENOSPC_AFTER=str(budget))
                expect_refused(recon(cli, output, env), output, tmp, before, f"{ext}, full after {budget} bytes")
            print(f"OK {ext}: refused at 0, {size // 2} and {size - 1} of {size} bytes, old file kept")


def tmpfs(cli):
    if os.geteuid() != 0:
        print("SKIP: mounting a tmpfs needs root")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as mnt:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"SKIP: cannot mount a tmpfs here: {r.stderr.strip()}")
            sys.exit(SKIP)
        try:
            output = os.path.join(mnt, "keep.nii.gz")
            if recon(cli, output).returncode != 0:
                fail("the first write failed")
            fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)  # the rest of the disk
            try:
                while os.write(fd, b"\0" * 4096) > 0:
                    pass
            except OSError:
                pass
            os.close(fd)
            before = snapshot(mnt)
            expect_refused(recon(cli, output), output, mnt, before, "tmpfs full")
            print("OK: a full tmpfs refused the write, the old file kept")
        finally:
            subprocess.run(["umount", mnt])


def tree(folder):
    """Every file under `folder` (hidden ones too) with its bytes."""
    files = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if os.path.isdir(path):
                files[rel + "/"] = b""
            else:
                with open(path, "rb") as f:
                    files[rel] = f.read()
    return files


def full_after(library, budget):
    return dict(os.environ, LD_PRELOAD=library, RECONSTUDIO_ENOSPC_AFTER=str(budget))


def dicom(cli, library):
    # A DICOM export is a folder of files: on a full disk no folder appears (not even a
    # partial one), no temporary is left, and the message names the output and the reason.
    with tempfile.TemporaryDirectory() as tmp:
        args = [cli, "recon", "--case", "small-2d", "--iterations", "3", "--format", "dicom", "--quiet", "--output"]
        r = subprocess.run(args + [os.path.join(tmp, "complete")], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            fail(f"the export without the shim failed: {r.stderr}")
        files = tree(os.path.join(tmp, "complete"))
        size = sum(len(b) for b in files.values())
        # The UIDs (DCMTK's: root, host, process, time, counter) differ in length from export to
        # export, each by less than its 64-byte maximum, five a file (study, series, frame of reference,
        # instance and the meta header's copy): the last budget stays below any run's size.
        last = size - 1 - 64 * 5 * len(files)
        before = tree(tmp)
        output = os.path.join(tmp, "series")
        for budget in (0, size // 2, last):
            r = subprocess.run(args + [output], capture_output=True, text=True, timeout=300, env=full_after(library, budget))
            what = f"DICOM, full after {budget} of {size} bytes"
            if r.returncode != 1:
                fail(f"{what}: exit {r.returncode}, expected 1; stderr: {r.stderr!r}")
            if "No space left on device" not in r.stderr or f"'{output}'" not in r.stderr:
                fail(f"{what}: the message does not name the output and the reason: {r.stderr!r}")
            if tree(tmp) != before:
                fail(f"{what}: something was left: {sorted(set(tree(tmp)) - set(before))}")
        print(f"OK DICOM: refused at 0, {size // 2} and {last} of {size} bytes, nothing left")


def batch(cli, library):
    # The batch summary is a pair (summary.csv, summary.json) rewritten by every batch command:
    # on a full disk the command fails naming the file, and the old pair stays, byte for byte,
    # whichever of the two the disk filled in.
    with tempfile.TemporaryDirectory() as tmp:
        inputs, out = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.mkdir(inputs)
        for name, case in (("a", "small-2d"), ("b", "small-2d")):
            r = subprocess.run([cli, "simulate", "--case", case, "--seed", str(ord(name)), "--output",
                                os.path.join(inputs, name + ".h5"), "--quiet"], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"simulate: {r.stderr}")
        recipe = os.path.join(tmp, "recipe.json")
        with open(recipe, "w") as f:
            json.dump({"reconstudio_recipe": 1, "iterations": 3, "backend": "cpu", "output": {"format": "cfl"}}, f)
        r = subprocess.run([cli, "batch", "--recipe", recipe, "--manifest", inputs, "--output-dir", out, "--engine", "local",
                            "-j", "1"], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            fail(f"the batch without the shim failed: {r.stderr}")
        # Row b's record gone: `status` now writes a summary that differs from the one on disk
        # (b no longer ok), so a half-replaced pair would show.
        os.remove(os.path.join(out, "results", "b.json"))
        before = tree(out)
        # The sizes of the summary `status` writes, from a copy: the budgets fall in each of the two files.
        probe = os.path.join(tmp, "probe")
        shutil.copytree(out, probe)
        subprocess.run([cli, "batch", "status", probe], capture_output=True, text=True, timeout=300)
        written = tree(probe)
        csv_size, json_size = len(written["summary.csv"]), len(written["summary.json"])
        for budget in (0, csv_size // 2, csv_size + json_size // 2, csv_size + json_size - 1):
            r = subprocess.run([cli, "batch", "status", out], capture_output=True, text=True, timeout=300,
                               env=full_after(library, budget))
            what = f"batch status, full after {budget} of {csv_size} + {json_size} bytes"
            if r.returncode != 1:
                fail(f"{what}: exit {r.returncode}, expected 1 (an error); stderr: {r.stderr!r}")
            if "No space left on device" not in r.stderr or "summary." not in r.stderr:
                fail(f"{what}: the message does not name the summary and the reason: {r.stderr!r}")
            after = tree(out)
            if after != before:
                changed = sorted(k for k in set(after) | set(before) if after.get(k) != before.get(k))
                fail(f"{what}: the summary or another file changed, or a temporary was left: {changed}")
        r = subprocess.run([cli, "batch", "status", out], capture_output=True, text=True, timeout=300)
        if tree(out)["summary.csv"] == before["summary.csv"] or tree(out)["summary.json"] == before["summary.json"]:
            fail(f"batch status without the shim did not rewrite the summary (exit {r.returncode}): {r.stderr!r}")
        print(f"OK batch summary: refused at 4 budgets up to {csv_size + json_size - 1} bytes, old pair kept")


def ct(cli, library):
    # The CT scan writer (its own HDF5 group, through the shared atomic writer): on a full disk
    # the old scan stays byte for byte, nothing else is left, and the message names the file;
    # a scan cannot be written over the scan the run reads, nor through a link to it.
    with tempfile.TemporaryDirectory() as tmp:
        scan = os.path.join(tmp, "scan.h5")
        args = [cli, "simulate", "--modality", "ct", "--case", "ct-2d-sparse", "--quiet", "--output", scan]
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            fail(f"the CT scan without the shim failed: {r.stderr}")
        size = os.path.getsize(scan)
        before = tree(tmp)
        other = args[:5] + ["ct-2d", "--quiet", "--output", scan]
        for budget in (0, size // 2, size - 1):
            r = subprocess.run(other, capture_output=True, text=True, timeout=300, env=full_after(library, budget))
            what = f"CT scan, full after {budget} of {size} bytes"
            if r.returncode != 1 or "No space left on device" not in r.stderr or scan not in r.stderr:
                fail(f"{what}: exit {r.returncode}, expected 1 naming the file and the reason: {r.stderr!r}")
            if tree(tmp) != before:
                fail(f"{what}: the old scan changed or something was left: {sorted(set(tree(tmp)) ^ set(before))}")
        link = os.path.join(tmp, "link.h5")
        os.symlink(scan, link)
        for out in (scan, link):
            r = subprocess.run([cli, "recon", "--input", scan, "--output", out, "--quiet"], capture_output=True, text=True,
                               timeout=300)
            if r.returncode == 0 or "overwrite" not in r.stderr:
                fail(f"recon --input {scan} --output {out}: exit {r.returncode}, expected a refusal: {r.stderr!r}")
        after = tree(tmp)
        after.pop("link.h5", None)
        if after != before:
            fail("refusing to write over the input changed a file")
        print(f"OK CT scan: refused at 0, {size // 2} and {size - 1} of {size} bytes and over its input, old scan kept")


if __name__ == "__main__":
    mode, cli = sys.argv[1], sys.argv[2]
    if mode in ("shim", "dicom", "batch", "ct"):
        {"shim": shim, "dicom": dicom, "batch": batch, "ct": ct}[mode](cli, sys.argv[3])
    else:
        tmpfs(cli)
