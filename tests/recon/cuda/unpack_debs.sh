# Sourced by the GPU machine's scripts (no package installs there): unpacks the carried Debian
# packages in .debs/ (FFTW; OpenBLAS's OpenMP build, libopenblas0-openmp and -dev) into /tmp/fftw,
# and .debs/fortran/ (libgfortran5, libquadmath0: OpenBLAS's Fortran runtime) into /tmp/fortran only
# where the machine has no libgfortran.so.5 of its own. Sets LD_LIBRARY_PATH and DEBS_CMAKE_ARGS.
mkdir -p /tmp/fftw
for f in .debs/*.deb; do dpkg -x "$f" /tmp/fftw; done
export LD_LIBRARY_PATH=/tmp/fftw/usr/lib/x86_64-linux-gnu:/tmp/fftw/usr/lib/x86_64-linux-gnu/openblas-openmp:${LD_LIBRARY_PATH:-}
if ! ldconfig -p | grep -q 'libgfortran\.so\.5 '; then
  mkdir -p /tmp/fortran
  for f in .debs/fortran/*.deb; do dpkg -x "$f" /tmp/fortran; done
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/tmp/fortran/usr/lib/x86_64-linux-gnu
fi
DEBS_CMAKE_ARGS="-DFFTW_ROOT=/tmp/fftw/usr -DOPENBLAS_ROOT=/tmp/fftw/usr"
