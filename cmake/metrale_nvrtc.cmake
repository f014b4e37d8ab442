# metrale::nvrtc: libnvrtc alone. FindCUDAToolkit's CUDA::nvrtc lists CUDA::cuda_driver,
# the toolkit's stub libcuda.so, among its link dependencies; a binary linked with it
# records libcuda.so.1 as needed wherever the linker keeps unused libraries (clang, or a
# GCC without --as-needed) and then does not start on a machine without a driver. The
# library opens the driver at run time, so it links NVRTC's own file and nothing else.
# Included by the build and by the installed package's config, after
# find_package(CUDAToolkit), so that the package records the target's name, never a path.
if(NOT TARGET metrale::nvrtc)
  if(NOT TARGET CUDA::nvrtc)
    message(FATAL_ERROR "metrale: the CUDA toolkit's NVRTC (CUDA::nvrtc) was not found")
  endif()
  get_target_property(metrale_nvrtc_location CUDA::nvrtc IMPORTED_LOCATION)
  add_library(metrale::nvrtc UNKNOWN IMPORTED)
  set_target_properties(metrale::nvrtc PROPERTIES IMPORTED_LOCATION "${metrale_nvrtc_location}")
  unset(metrale_nvrtc_location)
endif()
