# Warnings for the project's own targets only; nothing global.
function(metrale_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(METRALE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
