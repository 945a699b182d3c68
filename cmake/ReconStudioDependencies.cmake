# Finds what each optional part needs and sets RECONSTUDIO_HAVE_<PART>.
include(CheckLanguage)

macro(reconstudio_option_state var out)
  string(TOUPPER "${${var}}" _v)
  set(${out} ${_v})
endmacro()

# OpenMP and FFTW (single and double, with their OpenMP threading) are required.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_path(FFTW_INCLUDE_DIR fftw3.h HINTS ${FFTW_ROOT}/include $ENV{FFTW_ROOT}/include)
foreach(lib fftw3 fftw3f fftw3_omp fftw3f_omp)
  find_library(FFTW_${lib}_LIBRARY ${lib} HINTS ${FFTW_ROOT}/lib ${FFTW_ROOT}/lib/x86_64-linux-gnu
               $ENV{FFTW_ROOT}/lib $ENV{FFTW_ROOT}/lib/x86_64-linux-gnu)
  if(NOT FFTW_${lib}_LIBRARY)
    message(FATAL_ERROR "FFTW library ${lib} not found: install libfftw3-dev (or set FFTW_ROOT)")
  endif()
endforeach()
if(NOT FFTW_INCLUDE_DIR)
  message(FATAL_ERROR "fftw3.h not found: install libfftw3-dev (or set FFTW_ROOT)")
endif()
# Eigen 3 (header-only): the eigen-decompositions of ESPIRiT's calibration matrix and of the
# per-voxel coil matrices (recon/sense).
find_package(Eigen3 3.3 NO_MODULE)
if(NOT TARGET Eigen3::Eigen)
  message(FATAL_ERROR "Eigen 3 not found: install libeigen3-dev (or set Eigen3_DIR)")
endif()
# LAPACK and BLAS: OpenBLAS's OpenMP build (Debian: libopenblas-openmp-dev), for ESPIRiT's Gram
# eigen-decomposition on the CPU. That build and not the pthreads one: its threads are OpenMP's, so
# they follow OMP_NUM_THREADS and never compete with the engine's own OpenMP threads.
set(OPENBLAS_ROOT "/usr" CACHE PATH "prefix of OpenBLAS's OpenMP build (lib/x86_64-linux-gnu/openblas-openmp)")
find_library(OPENBLAS_LIBRARY openblas
             PATHS ${OPENBLAS_ROOT}/lib/x86_64-linux-gnu/openblas-openmp ${OPENBLAS_ROOT}/lib/openblas-openmp NO_DEFAULT_PATH)
if(NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS (OpenMP build) not found in ${OPENBLAS_ROOT}: install libopenblas-openmp-dev (or set OPENBLAS_ROOT)")
endif()
add_library(reconstudio_fftw INTERFACE)
target_include_directories(reconstudio_fftw INTERFACE ${FFTW_INCLUDE_DIR})
target_link_libraries(reconstudio_fftw INTERFACE ${FFTW_fftw3_omp_LIBRARY} ${FFTW_fftw3f_omp_LIBRARY}
                      ${FFTW_fftw3_LIBRARY} ${FFTW_fftw3f_LIBRARY})

# CUDA
reconstudio_option_state(RECONSTUDIO_WITH_CUDA _cuda)
set(RECONSTUDIO_HAVE_CUDA OFF)
if(NOT _cuda STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${RECONSTUDIO_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA C++20 dialect for nvcc
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(RECONSTUDIO_HAVE_CUDA ON)
  elseif(_cuda STREQUAL "ON")
    message(FATAL_ERROR "RECONSTUDIO_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# HDF5 (serial, through FindHDF5/h5cc: libvtk9-dev also installs the MPI build) and ISMRMRD.
reconstudio_option_state(RECONSTUDIO_WITH_HDF5 _hdf5)
set(RECONSTUDIO_HAVE_HDF5 OFF)
set(RECONSTUDIO_HAVE_ISMRMRD OFF)
if(NOT _hdf5 STREQUAL "OFF")
  set(HDF5_PREFER_PARALLEL OFF)
  find_package(HDF5 COMPONENTS C CXX QUIET)
  if(HDF5_FOUND)
    set(RECONSTUDIO_HAVE_HDF5 ON)
    find_package(ISMRMRD CONFIG QUIET)
    if(ISMRMRD_FOUND)
      set(RECONSTUDIO_HAVE_ISMRMRD ON)
    endif()
  elseif(_hdf5 STREQUAL "ON")
    message(FATAL_ERROR "RECONSTUDIO_WITH_HDF5=ON but HDF5 was not found (libhdf5-dev)")
  endif()
endif()

# Qt 6 (Widgets, Charts, OpenGL widgets, Test)
reconstudio_option_state(RECONSTUDIO_WITH_QT _qt)
set(RECONSTUDIO_HAVE_QT OFF)
if(NOT _qt STREQUAL "OFF")
  find_package(Qt6 QUIET COMPONENTS Core Gui Widgets Charts OpenGL OpenGLWidgets Concurrent Test)
  if(Qt6_FOUND)
    set(RECONSTUDIO_HAVE_QT ON)
  elseif(_qt STREQUAL "ON")
    message(FATAL_ERROR "RECONSTUDIO_WITH_QT=ON but Qt 6 was not found (qt6-base-dev qt6-charts-dev libqt6opengl6-dev)")
  endif()
endif()

# VTK 9 (components listed: with none, or with GUISupportQt, it looks for Qt5)
reconstudio_option_state(RECONSTUDIO_WITH_VTK _vtk)
set(RECONSTUDIO_HAVE_VTK OFF)
if(RECONSTUDIO_HAVE_QT AND NOT _vtk STREQUAL "OFF")
  find_package(VTK 9 QUIET COMPONENTS CommonCore CommonDataModel CommonExecutionModel ImagingCore
               ImagingSources RenderingCore RenderingOpenGL2 RenderingVolume RenderingVolumeOpenGL2
               RenderingUI RenderingFreeType InteractionStyle RenderingAnnotation FiltersSources
               FiltersCore FiltersGeneral IOImage)
  if(VTK_FOUND)
    set(RECONSTUDIO_HAVE_VTK ON)
  elseif(_vtk STREQUAL "ON")
    message(FATAL_ERROR "RECONSTUDIO_WITH_VTK=ON but VTK 9 was not found (libvtk9-dev)")
  endif()
endif()

if(RECONSTUDIO_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
