#!/usr/bin/env python3
"""reconstudio-cli on CT: simulate a scan, compare FDK and the iterative solve on it
(JSON rows fdk and iterative), write NIfTI volumes with their voxel size, refuse bad
geometry and unknown modalities with clear messages."""
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile


def run(cli, *args, timeout=600):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def nifti_header(path):
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    dim = struct.unpack_from("<8h", data, 40)
    pixdim = struct.unpack_from("<8f", data, 76)
    return dim, pixdim


def main(cli):
    with tempfile.TemporaryDirectory() as tmp:
        scan = os.path.join(tmp, "sparse.h5")
        r = run(cli, "simulate", "--modality", "ct", "--case", "ct-2d-sparse", "--output", scan)
        if r.returncode != 0:
            fail(f"simulate exited {r.returncode}: {r.stderr}")
        r = run(cli, "compare", "--input", scan, "--iterations", "40", "--json", "--quiet")
        if r.returncode != 0:
            fail(f"compare exited {r.returncode}: {r.stderr}")
        print(r.stdout)
        result = json.loads(r.stdout.strip().splitlines()[-1])
        methods = {m["name"]: m for m in result["methods"]}
        if set(methods) != {"fdk", "iterative"}:
            fail(f"rows {list(methods)}, expected fdk and iterative")
        if result["modality"] != "ct" or result["case"]["views"] != 60 or result["iterations"] != 40:
            fail(f"not the sparse-view case: {result['case']}, {result['iterations']} iterations")
        if result["solver"] != "os-sart":
            fail(f"the default solver of a noiseless scan is {result['solver']}, expected os-sart")
        fdk, it = methods["fdk"], methods["iterative"]
        if not it["psnr_db"] > fdk["psnr_db"] + 2.0 or not it["error_percent"] < fdk["error_percent"]:
            fail(f"iterative {it} does not beat FDK {fdk} on 60 views")

        # recon writes both volumes, in 1/mm, with the voxel size (2 mm) in the header.
        out, fdk_out = os.path.join(tmp, "it.nii.gz"), os.path.join(tmp, "fdk.nii")
        r = run(cli, "recon", "--input", scan, "--iterations", "3", "--output", out, "--fdk-output", fdk_out, "--quiet")
        if r.returncode != 0:
            fail(f"recon exited {r.returncode}: {r.stderr}")
        for path in (out, fdk_out):
            dim, pixdim = nifti_header(path)
            if dim[:3] != (2, 128, 128) or abs(pixdim[1] - 2.0) > 1e-6 or abs(pixdim[2] - 2.0) > 1e-6:
                fail(f"{path}: dims {dim}, voxel {pixdim[1:4]}")
        # A case changed on the command line says what it is now, not what the case was.
        noisy = os.path.join(tmp, "noisy.h5")
        r = run(cli, "simulate", "--modality", "ct", "--case", "ct-2d-sparse", "--photons", "1000", "--output", noisy)
        if r.returncode != 0:
            fail(f"simulate --photons exited {r.returncode}: {r.stderr}")
        r = run(cli, "compare", "--input", noisy, "--iterations", "2", "--json", "--quiet")
        source = json.loads(r.stdout.strip().splitlines()[-1])["case"]["source"] if r.returncode == 0 else r.stderr
        if "noiseless" in source or "1000 photons" not in source:
            fail(f"the noisy scan's source reads '{source}'")
        r = run(cli, "recon", "--input", scan, "--output", scan)
        if r.returncode == 0 or "would overwrite the CT scan" not in r.stderr:
            fail(f"writing over the scan was not refused: {r.returncode} {r.stderr}")

        # A detector in front of the isocentre, an unknown modality, a prior CT lacks.
        r = run(cli, "simulate", "--modality", "ct", "--sod", "900", "--sdd", "800", "--output", os.path.join(tmp, "x.h5"))
        if r.returncode != 1 or "behind the isocentre" not in r.stderr:
            fail(f"bad geometry: exit {r.returncode}, {r.stderr}")
        r = run(cli, "simulate", "--modality", "pet", "--output", os.path.join(tmp, "x.h5"))
        if r.returncode != 2 or "--modality expects mr or ct" not in r.stderr:
            fail(f"unknown modality: exit {r.returncode}, {r.stderr}")
        r = run(cli, "compare", "--case", "ct-2d", "--regularizer", "wavelet")
        if r.returncode != 1 or "not available" not in r.stderr:
            fail(f"wavelet on CT: exit {r.returncode}, {r.stderr}")
        # OS-SART's options: no prior, subsets within the views, a known solver name.
        r = run(cli, "compare", "--input", scan, "--ct-solver", "os-sart", "--regularizer", "tv")
        if r.returncode != 2 or "no meaning for OS-SART" not in r.stderr:
            fail(f"a prior with OS-SART: exit {r.returncode}, {r.stderr}")
        r = run(cli, "compare", "--input", scan, "--subsets", "61")
        if r.returncode != 1 or "number of subsets" not in r.stderr:
            fail(f"61 subsets of 60 views: exit {r.returncode}, {r.stderr}")
        r = run(cli, "compare", "--input", scan, "--ct-solver", "sirt")
        if r.returncode != 1 or "unknown CT solver" not in r.stderr:
            fail(f"an unknown CT solver: exit {r.returncode}, {r.stderr}")
        r = run(cli, "compare", "--case", "ct-9d")
        if r.returncode == 0:
            fail("an unknown case was accepted")
        r = run(cli, "--help")
        for option in ("--modality", "--fdk-output", "--window", "--photons", "--short-scan", "--unweighted",
                       "--ct-solver", "--subsets", "--relaxation"):
            if option not in r.stdout:
                fail(f"--help does not mention {option}")
    print("PASS")


if __name__ == "__main__":
    main(sys.argv[1])
