# Warnings for the project's own targets only; nothing global.
function(metrale_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  # GCC 13 reports array-bounds / stringop-overflow inside fmt's own headers once they
  # are inlined into our code (false positives, not ours to fix).
  target_compile_options(${target} PRIVATE
    $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_GREATER_EQUAL:$<CXX_COMPILER_VERSION>,13>>:-Wno-array-bounds;-Wno-stringop-overflow>)
  if(METRALE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
