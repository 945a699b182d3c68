#!/usr/bin/env python3
"""The command line on a full disk: `recon --output` fails with exit 1 and a message naming the
file and the reason, and leaves the previous file byte for byte as it was, with no temporary left.

  shim   every output format, the disk "full" through tests/support/enospc_shim.c (LD_PRELOAD)
  tmpfs  a real full file system: a small tmpfs mounted by the test (needs root; else skipped, 77)
"""
import os
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


if __name__ == "__main__":
    mode, cli = sys.argv[1], sys.argv[2]
    if mode == "shim":
        shim(cli, sys.argv[3])
    else:
        tmpfs(cli)
