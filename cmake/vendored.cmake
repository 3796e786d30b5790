# Dependencies carried in source form to a machine that lacks them (tests/gpu/carry-deps.sh fills
# the folder; tests/gpu/device-check.sh points SCALEDESK_VENDOR_DIR at it): yaml-cpp and protobuf
# are built here as static libraries, and get libtorch's C++ ABI flag (TORCH_CXX_FLAGS) once
# libtorch is found (SCALEDESK_VENDORED_TARGETS, the top-level CMakeLists.txt), so that a PyTorch
# wheel's libtorch links with them whatever its _GLIBCXX_USE_CXX11_ABI; CLI11, nlohmann-json and
# Boost's CRC are headers. Empty (the default): the system's packages, as everywhere else.
set(SCALEDESK_VENDOR_DIR "" CACHE PATH "carried dependency sources (tests/gpu/carry-deps.sh); empty: the system's packages")
set(SCALEDESK_VENDORED_YAML_CPP OFF)
if(NOT SCALEDESK_VENDOR_DIR)
  return()
endif()
set(_vendor "${SCALEDESK_VENDOR_DIR}")
if(NOT IS_DIRECTORY "${_vendor}")
  message(FATAL_ERROR "SCALEDESK_VENDOR_DIR=${_vendor} is not a folder (make it with tests/gpu/carry-deps.sh)")
endif()
list(PREPEND CMAKE_PREFIX_PATH "${_vendor}/prefix/usr")

set(SCALEDESK_VENDORED_TARGETS "")

if(EXISTS "${_vendor}/yaml-cpp/CMakeLists.txt")
  set(YAML_CPP_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(YAML_CPP_BUILD_TOOLS OFF CACHE BOOL "" FORCE)
  set(YAML_CPP_BUILD_CONTRIB OFF CACHE BOOL "" FORCE)
  set(YAML_CPP_INSTALL OFF CACHE BOOL "" FORCE)
  set(YAML_BUILD_SHARED_LIBS OFF CACHE BOOL "" FORCE)
  add_subdirectory("${_vendor}/yaml-cpp" "${CMAKE_BINARY_DIR}/vendor/yaml-cpp" EXCLUDE_FROM_ALL)
  target_compile_options(yaml-cpp PRIVATE -w)
  list(APPEND SCALEDESK_VENDORED_TARGETS yaml-cpp)
  file(STRINGS "${_vendor}/yaml-cpp/CMakeLists.txt" _yaml_project REGEX "^project\\(YAML_CPP VERSION")
  string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" yaml-cpp_VERSION "${_yaml_project}")
  set(SCALEDESK_VENDORED_YAML_CPP ON)
endif()

if(EXISTS "${_vendor}/protobuf/cmake/CMakeLists.txt")
  set(protobuf_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(protobuf_BUILD_CONFORMANCE OFF CACHE BOOL "" FORCE)
  set(protobuf_BUILD_EXAMPLES OFF CACHE BOOL "" FORCE)
  set(protobuf_BUILD_SHARED_LIBS OFF CACHE BOOL "" FORCE)
  set(protobuf_WITH_ZLIB OFF CACHE BOOL "" FORCE)
  set(protobuf_INSTALL OFF CACHE BOOL "" FORCE)
  add_subdirectory("${_vendor}/protobuf/cmake" "${CMAKE_BINARY_DIR}/vendor/protobuf" EXCLUDE_FROM_ALL)
  foreach(_target libprotobuf-lite libprotobuf libprotoc protoc)
    target_compile_options(${_target} PRIVATE -w)
  endforeach()
  list(APPEND SCALEDESK_VENDORED_TARGETS libprotobuf-lite libprotobuf libprotoc protoc)
endif()

if(EXISTS "${_vendor}/boost/boost/crc.hpp")
  set(BOOST_ROOT "${_vendor}/boost")
  set(Boost_NO_BOOST_CMAKE ON)
  set(Boost_NO_SYSTEM_PATHS ON)
endif()
