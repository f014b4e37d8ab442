// NVRTC front end: one source plus defines and options to a CUBIN for an `sm_XY`
// target. Every embedded `.cuh` is offered to the program as an include. A failed
// compile throws Error carrying the NVRTC log and the options.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

namespace metrale {

struct Define {
  std::string name;
  std::string value;
  friend bool operator==(const Define&, const Define&) = default;
  friend auto operator<=>(const Define&, const Define&) = default;
};

struct CompileRequest {
  std::string source_name;          // for messages and the NVRTC program name
  std::string_view source;          // the text to compile
  std::vector<Define> defines;
  std::vector<std::string> options; // extra NVRTC options
  std::string target;               // "sm_90" (CUBIN) or "compute_90" (PTX)
  // Ask ptxas for its per-kernel report (registers, stack, spills): CompiledModule's
  // ptxas_report. Only for an sm_XY target; PTX goes through no ptxas.
  bool ptxas_report = false;
};

struct CompiledModule {
  std::vector<char> image;  // CUBIN, or NUL-terminated PTX for a compute_XY target
  bool is_cubin = true;
  std::string log;          // NVRTC's log (empty when it printed nothing)
  std::string ptxas_report; // ptxas's "info" lines, taken out of `log` (ptxas_report asked)
  std::vector<std::string> options;
  double compile_ms = 0.0;
};

CompiledModule nvrtc_compile(const CompileRequest& request);

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
  friend auto operator<=>(const NvrtcVersion&, const NvrtcVersion&) = default;
};

// The linked NVRTC's version (nvrtcVersion), read once.
NvrtcVersion linked_nvrtc_version();

// The options nvrtc_compile passes for `request`, in order (for messages and keys).
std::vector<std::string> nvrtc_options(const CompileRequest& request);

// The same for an NVRTC of `version`, which gets only options it knows.
std::vector<std::string> nvrtc_options(const CompileRequest& request, NvrtcVersion version);

// "sm_XY" targets NVRTC can emit CUBIN for (nvrtcGetSupportedArchs).
std::vector<std::string> nvrtc_supported_targets();

// "MAJOR.MINOR" of the linked NVRTC.
std::string nvrtc_version();

// The loaded NVRTC build: "build-id <hex>", the GNU build ID of the object that holds
// NVRTC's code, read once from memory ("unknown" without one). nvrtc_version gives no
// patch level, so a patched NVRTC of the same MAJOR.MINOR differs from the old one only
// here; every copy of one build has the same ID, wherever it is installed (hashing the
// file, about 100 MB, would cost some 400 ms per process).
const std::string& nvrtc_library_identity();

// Accepts "sm_90", "90", "9.0"; throws Error otherwise. Returns "sm_90".
std::string normalize_target(std::string_view target);

}  // namespace metrale
