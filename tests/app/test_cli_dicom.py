#!/usr/bin/env python3
"""reconstudio-cli recon --format dicom (issue 16): one MR series per image in a new
folder, read back with pydicom where installed; an existing folder is left alone."""
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main(cli):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "series")
        args = [cli, "recon", "--case", "small-2d", "--iterations", "3", "--backend", "cpu", "--quiet"]
        r = subprocess.run(args + ["--output", out, "--format", "dicom"], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            fail(f"recon --format dicom exited {r.returncode}: {r.stderr}")
        series = sorted(os.listdir(out))
        if series != ["01-gridding-trilinear", "02-gridding-kb", "03-iterative"]:
            fail(f"unexpected series folders {series}")
        for s in series:
            if os.listdir(os.path.join(out, s)) != ["IM0001.dcm"]:
                fail(f"{s}: a 2D image is one file, found {os.listdir(os.path.join(out, s))}")
        if any(".part-" in n for n in os.listdir(tmp)):
            fail(f"temporary folder left behind: {os.listdir(tmp)}")
        probe = ("import pydicom,sys; d = pydicom.dcmread(sys.argv[1]); "
                 "print(d.Modality, d.Rows, d.Columns, d.SeriesDescription)")
        for python in ("/usr/bin/python3", sys.executable):
            p = subprocess.run([python, "-c", probe, os.path.join(out, "03-iterative", "IM0001.dcm")],
                               capture_output=True, text=True)
            if p.returncode == 0:
                words = p.stdout.split()
                if words[:3] != ["MR", "48", "48"] or "Iterative CG fd" not in p.stdout or "3 it" not in p.stdout:
                    fail(f"pydicom read {p.stdout!r}")
                break
        else:
            print("pydicom not installed: skipped reading back")
        # A second export to the same (now non-empty) folder is refused and changes nothing.
        before = sorted(os.listdir(out))
        r = subprocess.run(args + ["--output", out, "--format", "dicom"], capture_output=True, text=True, timeout=300)
        if r.returncode == 0 or "not empty" not in r.stderr:
            fail(f"export into a non-empty folder: {r.returncode} {r.stderr!r}")
        if sorted(os.listdir(out)) != before:
            fail("the existing folder was changed")
        r = subprocess.run(args + ["--output", out, "--format", "tiff"], capture_output=True, text=True)
        if r.returncode == 0 or "--format expects dicom" not in r.stderr:
            fail(f"--format tiff: {r.returncode} {r.stderr!r}")
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1])
