#!/usr/bin/env python3
"""reconstudio-cli on ISMRMRD files of several frames (docs/FILE_FORMAT.md, "Frames"): recon writes
every frame stacked (slices along z, repetitions as NIfTI's 4th dimension), each frame its own
image; compare and --frame take one frame and say which; a file without a stored trajectory is
named and reconstructs with --trajectory; Ctrl-C writes only complete frames.
Usage: test_cli_frames.py CLI WRITER (WRITER: write_ismrmrd_frames)."""
import array
import json
import math
import os
import signal
import struct
import subprocess
import sys
import tempfile


def run(cli, *args, timeout=600):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def read_nifti(path):
    """dims (dim[0] first) and float32 values of a NIfTI-1 file written by the CLI."""
    with open(path, "rb") as f:
        data = f.read()
    dims = list(struct.unpack_from("<8h", data, 40))
    offset = int(struct.unpack_from("<f", data, 108)[0])
    values = array.array("f")
    values.frombytes(data[offset:])
    return dims[: dims[0] + 1], values


def read_cfl(stem):
    with open(stem + ".hdr") as f:
        dims = [int(x) for x in f.read().split("\n")[1].split()]
    values = array.array("f")
    with open(stem + ".cfl", "rb") as f:
        values.frombytes(f.read())
    return dims, [math.hypot(values[i], values[i + 1]) for i in range(0, len(values), 2)]


def error(image, truth):
    """Relative error after the least-squares scale (the noise scan's whitening scales the data)."""
    a = sum(x * y for x, y in zip(image, truth)) / sum(x * x for x in image)
    return math.sqrt(sum((a * x - y) ** 2 for x, y in zip(image, truth)) / sum(y * y for y in truth))


def chunks(values, n):
    return [list(values[i : i + n]) for i in range(0, len(values), n)]


def main(cli, writer):
    tmp = tempfile.mkdtemp(prefix="cli-frames-")
    slices, stack, notraj = (os.path.join(tmp, n) for n in ("slices.h5", "stack.h5", "notraj.h5"))
    for kind, path in (("slices", slices), ("stack", stack), ("slices-no-trajectory", notraj)):
        if subprocess.run([writer, kind, path]).returncode != 0:
            fail(f"{writer} {kind} failed")
    common = ["--only", "iterative", "--iterations", "20", "--backend", "cpu"]
    per_frame = 32 * 32

    # Every frame, stacked: 32x32 x 2 slices x 2 repetitions.
    out = os.path.join(tmp, "slices.nii")
    r = run(cli, "recon", "--input", slices, "--output", out, *common)
    if r.returncode != 0 or "frame 4/4 (slice 1, repetition 1)" not in r.stderr:
        fail(f"recon of every frame: {r.returncode} {r.stderr}")
    dims, values = read_nifti(out)
    if dims != [4, 32, 32, 2, 2]:
        fail(f"expected a 32x32x2 x 2 NIfTI, got dims {dims}")
    images = chunks(values, per_frame)
    _, truth = read_cfl(slices + "_truth")
    truths = chunks(truth, per_frame)
    for i, image in enumerate(images):
        own = error(image, truths[i])
        others = [error(image, truths[j]) for j in range(4) if j != i and (j % 2) != (i % 2)]
        print(f"frame {i}: error {100 * own:.1f} % (other slice's truth: {', '.join(f'{100 * e:.0f} %' for e in others)})")
        if not own < 0.25 or not all(e > 2 * own for e in others):
            fail(f"frame {i} is not its own image: {own} vs {others}")
    ratio = [sum(images[2 + s]) / sum(images[s]) for s in range(2)]
    if not all(abs(x - 2) < 0.05 for x in ratio):
        fail(f"repetition 1 should be twice repetition 0: {ratio}")

    # A stack of stars: the 3D image, partitions along z.
    out = os.path.join(tmp, "stack.nii.gz")
    r = run(cli, "recon", "--input", stack, "--output", os.path.join(tmp, "stack.nii"), *common)
    if r.returncode != 0:
        fail(f"stack of stars: {r.returncode} {r.stderr}")
    dims, values = read_nifti(os.path.join(tmp, "stack.nii"))
    _, truth = read_cfl(stack + "_truth")
    e = error(values, truth)
    print(f"stack of stars: {dims}, error {100 * e:.1f} %")
    if dims != [3, 32, 32, 4] or not e < 0.2:
        fail(f"stack of stars: dims {dims}, error {e}")

    # One frame: compare says which; --frame chooses; other formats then work.
    r = run(cli, "compare", "--input", slices, "--quiet", "--json", *common[2:])
    if r.returncode != 0 or "frame 0 of 4 (slice 0, repetition 0)" not in r.stdout:
        fail(f"compare should name frame 0 of 4: {r.returncode} {r.stdout} {r.stderr}")
    case = json.loads(r.stdout.strip().splitlines()[-1])["case"]
    if (case["frame"], case["frames"]) != (0, 4):
        fail(f"compare's JSON should carry frame 0 of 4: {case}")
    r = run(cli, "recon", "--input", slices, "--frame", "3", "--output", os.path.join(tmp, "f3.cfl"), "--quiet", *common)
    if r.returncode != 0:
        fail(f"--frame 3: {r.returncode} {r.stderr}")
    dims, f3 = read_cfl(os.path.join(tmp, "f3"))
    if not error(f3, truths[3]) < 0.2:
        fail("--frame 3 is not frame 3's image")
    for bad, words in ((["--frame", "4"], ["4 frame(s)", "--frame 4"]),
                       (["--output", os.path.join(tmp, "x.png")], ["NIfTI", "--frame K"]),
                       (["--format", "dicom", "--output", os.path.join(tmp, "dcm")], ["--frame K"])):
        args = ["recon", "--input", slices, "--quiet", *common, *bad]
        if "--output" not in bad:
            args += ["--output", os.path.join(tmp, "x.nii")]
        r = run(cli, *args)
        if r.returncode == 0 or not all(w in r.stderr for w in words):
            fail(f"{bad} should be refused naming {words}: {r.returncode} {r.stderr}")

    # No stored trajectory: named, then supplied.
    r = run(cli, "recon", "--input", notraj, "--output", os.path.join(tmp, "n.nii"), "--quiet", *common)
    if r.returncode != 1 or "stores no trajectory" not in r.stderr or "--trajectory" not in r.stderr:
        fail(f"a file without trajectory should be named: {r.returncode} {r.stderr}")
    r = run(cli, "recon", "--input", notraj, "--trajectory", notraj + "_traj", "--output", os.path.join(tmp, "n.nii"),
            "--quiet", *common)
    if r.returncode != 0:
        fail(f"--trajectory: {r.returncode} {r.stderr}")
    _, n = read_nifti(os.path.join(tmp, "n.nii"))
    if not error(chunks(n, per_frame)[1], truths[1]) < 0.2:
        fail("the frames read with --trajectory are not their images")

    # Ctrl-C in frame 3 of 4: the first volume (frames 0 and 1) is written, nothing else.
    out = os.path.join(tmp, "cancelled.nii")
    seen = []
    p = subprocess.Popen([cli, "recon", "--input", slices, "--output", out, "--only", "iterative", "--iterations",
                          "30", "--backend", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        seen.append(line)
        if line.startswith("frame 3/4"):
            p.send_signal(signal.SIGINT)
            break
    rest = p.communicate(timeout=300)[1]
    err = "".join(seen) + rest
    if p.returncode != 130:
        fail(f"expected exit 130 after Ctrl-C in frame 3, got {p.returncode}: {err}")
    if "cancelled during frame 2 (slice 0, repetition 1)" not in err or "frames 2 to 3 not written" not in err:
        fail(f"the message should name the frame and what was not written: {err}")
    dims, values = read_nifti(out)
    if dims != [3, 32, 32, 2]:
        fail(f"the complete volume (2 slices) only: dims {dims}")
    print("OK: frames")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
