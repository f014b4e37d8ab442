# Install rules and the CMake package: headers, the library (static or shared, by
# BUILD_SHARED_LIBS), the CLI, and metrale_kernelsConfig.cmake so that an engine adds
#   find_package(metrale_kernels CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE metrale::kernels)
# Nothing installed may name a path of the build machine's source or build tree, and
# dependencies are found again on the consumer's machine by find_dependency, never
# recorded as absolute paths (the binaries' run path names the CUDA toolkit: see below).
include(CMakePackageConfigHelpers)

set(METRALE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/metrale_kernels)

# Debug information names files relative to the source and build trees, so that the
# installed library and CLI carry no path of the build machine in any build type.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  foreach(target metrale_kernels metrale metrale_bench_schedule)
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE
          "-ffile-prefix-map=${PROJECT_SOURCE_DIR}=."
          "-ffile-prefix-map=${PROJECT_BINARY_DIR}=.")
    endif()
  endforeach()
endif()

install(TARGETS metrale_kernels
        EXPORT metrale_kernelsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/metrale
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

# The installed binaries' run path ends with the CUDA toolkit's library directory found
# here: the CLI needs libcublas, libcublasLt and libcudart, the library built shared
# needs libnvrtc, and the install drops the build tree's run path, so without it they
# start only where ld.so.conf lists that directory. A hint, not a requirement: DT_RUNPATH
# is searched after LD_LIBRARY_PATH and before ld.so.conf's directories, so on a machine
# with the toolkit elsewhere those still find it. It does not reach libnvrtc-builtins,
# which libnvrtc dlopens by name at its first compile: that search takes libnvrtc's own
# run path (it has none), not ours, so it still needs ld.so.conf or LD_LIBRARY_PATH.
get_target_property(metrale_library_type metrale_kernels TYPE)
if(metrale_library_type STREQUAL "SHARED_LIBRARY")
  set_target_properties(metrale_kernels PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
endif()
unset(metrale_library_type)

if(TARGET metrale)
  # The CLI finds a shared library next to it in the prefix first, wherever the prefix
  # moves, then the toolkit's libraries.
  file(RELATIVE_PATH metrale_bin_to_lib ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
       ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(metrale PROPERTIES
      INSTALL_RPATH "$ORIGIN/${metrale_bin_to_lib};${CUDAToolkit_LIBRARY_DIR}")
  install(TARGETS metrale RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT metrale_kernelsTargets
        NAMESPACE metrale::
        FILE metrale_kernelsTargets.cmake
        DESTINATION ${METRALE_CMAKE_DIR})

configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/metrale_kernelsConfig.cmake.in
    ${PROJECT_BINARY_DIR}/metrale_kernelsConfig.cmake
    INSTALL_DESTINATION ${METRALE_CMAKE_DIR})
# 0.x releases break the API between minor versions; 1.0 on, within a major version.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(metrale_compatibility SameMinorVersion)
else()
  set(metrale_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
    ${PROJECT_BINARY_DIR}/metrale_kernelsConfigVersion.cmake
    VERSION ${PROJECT_VERSION}
    COMPATIBILITY ${metrale_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/metrale_kernelsConfig.cmake
              ${PROJECT_BINARY_DIR}/metrale_kernelsConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/metrale_nvrtc.cmake
        DESTINATION ${METRALE_CMAKE_DIR})
