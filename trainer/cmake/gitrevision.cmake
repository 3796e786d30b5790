# Run at every build (cmake -P): writes OUTPUT, a header with the source tree's git revision
# (SCALEDESK_GIT_REVISION, 12 hex digits), and touches it only when the revision changed, so a
# commit rebuilds the two files that print it and nothing else. "unknown" outside a git checkout
# of this project (a deploy's uploaded sources, a tarball), even where a folder above is a
# repository of something else.
set(_rev "unknown")
find_program(_git git)
if(_git)
  execute_process(COMMAND "${_git}" ls-files --error-unmatch CMakeLists.txt
                  WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE _tracked OUTPUT_QUIET ERROR_QUIET)
  if(_tracked EQUAL 0)
    execute_process(COMMAND "${_git}" rev-parse --short=12 HEAD
                    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE _out
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _out MATCHES "^[0-9a-f]+$")
      set(_rev "${_out}")
    endif()
  endif()
endif()
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT "// Generated at build time by trainer/cmake/gitrevision.cmake.
#pragma once
#define SCALEDESK_GIT_REVISION \"${_rev}\"
" @ONLY)
