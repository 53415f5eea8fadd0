# forbidden_includes.cmake — forbidden_includes(RESULT SOURCES... MODULES...): for the boundary
# checks (cmake/check_module_dependencies.cmake, src/engine/check_boundary.cmake), the lines
# "SOURCE includes HEADER" for every #include of a header under a folder named in MODULES.
function(forbidden_includes result)
  cmake_parse_arguments(ARG "" "" "SOURCES;MODULES" ${ARGN})
  set(violations)
  foreach(source IN LISTS ARG_SOURCES)
    file(STRINGS ${source} include_lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line IN LISTS include_lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*$" "\\1" header "${line}")
      if(header MATCHES "^([^/]+)/" AND CMAKE_MATCH_1 IN_LIST ARG_MODULES)
        list(APPEND violations "${source} includes ${header}")
      endif()
    endforeach()
  endforeach()
  set(${result} ${violations} PARENT_SCOPE)
endfunction()
