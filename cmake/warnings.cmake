# Warnings for the project's own targets only; nothing global. With METRALE_SANITIZE
# (tests/sanitize.sh) the same targets are also built and linked with AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer (address; any report fatal) or with
# ThreadSanitizer (thread).
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
  if(METRALE_SANITIZE)
    set(sanitizers -fsanitize=thread)
    if(METRALE_SANITIZE STREQUAL "address")
      set(sanitizers -fsanitize=address,undefined -fno-sanitize-recover=undefined)
    endif()
    target_compile_options(${target} PRIVATE ${sanitizers} -fno-omit-frame-pointer)
    # PUBLIC: whatever links a sanitized static library in this build needs the runtimes
    # too. BUILD_INTERFACE keeps the flags out of an installed package's link interface,
    # where they would force the sanitizer runtimes on every engine that links it.
    target_link_options(${target} PUBLIC "$<BUILD_INTERFACE:${sanitizers}>")
  endif()
endfunction()
