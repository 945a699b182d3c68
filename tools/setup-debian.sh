#!/usr/bin/env bash
# Installs what ReconStudio needs to build, test and run on Debian 12 (all from Debian's main archive).
# The CUDA backend is built when nvcc is present (/usr/local/cuda); it is not installed here.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config git ca-certificates python3 \
  libfftw3-dev libeigen3-dev libopenblas-openmp-dev libgtest-dev \
  qt6-base-dev qt6-base-dev-tools libqt6opengl6-dev qt6-charts-dev \
  libvtk9-dev libhdf5-dev libismrmrd-dev ismrmrd-tools libnifti2-dev libpng-dev \
  libdcmtk-dev dcmtk dicom3tools python3-pydicom \
  xvfb xauth libgl1-mesa-dri \
  bart dpkg-dev file appstream desktop-file-utils \
  nlohmann-json3-dev slurm-wlm munge \
  python3-h5py clang-14 libclang-rt-14-dev libomp-14-dev \
  > /dev/null
