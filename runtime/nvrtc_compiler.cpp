#include "metrale/nvrtc_compiler.hpp"

#include <elf.h>
#include <link.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "metrale/embedded_sources.hpp"
#include "metrale/error.hpp"
#include "metrale/log.hpp"
#include "text_lines.hpp"

namespace metrale {
namespace {

void check_nvrtc(nvrtcResult r, std::string_view call) {
  if (r != NVRTC_SUCCESS) fail("{} failed: {}", call, nvrtcGetErrorString(r));
}

// Owns one nvrtcProgram; destroyed on every path out of nvrtc_compile.
class Program {
 public:
  Program(std::string_view source, const std::string& name,
          const std::vector<const char*>& header_texts,
          const std::vector<const char*>& header_names) {
    std::string text(source);
    check_nvrtc(nvrtcCreateProgram(&program_, text.c_str(), name.c_str(),
                                   static_cast<int>(header_texts.size()), header_texts.data(),
                                   header_names.data()),
                "nvrtcCreateProgram");
  }
  ~Program() {
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  check_nvrtc(nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  if (size > 0) check_nvrtc(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || std::isspace(static_cast<unsigned char>(log.back())))) {
    log.pop_back();
  }
  return log;
}

// Moves ptxas's verbose report out of `log` into `report`: its lines start "ptxas info"
// or, for a function's properties, "ptxas" and a dot. Anything else (a warning) stays.
void split_ptxas_report(std::string& log, std::string& report) {
  std::string rest;
  for_each_line(log, [&](std::string_view line) {
    const std::size_t dot = line.find_first_not_of(' ', 5);
    const bool ptxas = line.starts_with("ptxas info") ||
                       (line.starts_with("ptxas ") && dot != std::string_view::npos &&
                        line[dot] == '.');
    std::string& to = ptxas ? report : rest;
    to.append(line).push_back('\n');
  });
  while (!rest.empty() && rest.back() == '\n') rest.pop_back();
  log = std::move(rest);
}

}  // namespace

std::string normalize_target(std::string_view target) {
  std::string_view rest = target;
  if (rest.starts_with("sm_")) rest.remove_prefix(3);
  // XY or XYZ, or a compute capability X.Y or XY.Z: one dot at most, before the last digit
  // (so neither "1.0.0" nor "9.00" passes for a real target).
  const std::size_t dot = rest.find('.');
  const bool dot_ok = dot == std::string_view::npos || (dot > 0 && dot + 2 == rest.size());
  std::string digits;
  for (char c : rest) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits.push_back(c);
    } else if (c != '.') {
      digits.clear();
      break;
    }
  }
  if (!dot_ok || digits.size() < 2 || digits.size() > 3) {
    fail("invalid target '{}': expected sm_XY (e.g. sm_90), XY or X.Y", target);
  }
  return "sm_" + digits;
}

std::vector<std::string> nvrtc_options(const CompileRequest& request) {
  return nvrtc_options(request, linked_nvrtc_version());
}

std::vector<std::string> nvrtc_options(const CompileRequest& request, NvrtcVersion version) {
  std::vector<std::string> options;
  const bool ptx = request.target.starts_with("compute_");
  options.push_back("--gpu-architecture=" +
                    (ptx ? request.target : normalize_target(request.target)));
  options.push_back("--std=c++17");
  options.push_back("--device-as-default-execution-space");
  options.push_back("--fmad=true");
  // The library's cache is the one cache (its location, key and healing documented).
  // NVRTC 12.9+ would also keep each compile in the driver's cache where a driver is
  // loaded, hiding compile times and holding a second copy outside the caller's control.
  // An older NVRTC has no such cache, and may refuse the option as unknown.
  if (version >= NvrtcVersion{12, 9}) options.push_back("--no-cache");
  // The kernels use no texture, device-runtime or CUDA-runtime declarations; leaving
  // them out shortens every compile's front end, and the PTX is unchanged.
  options.push_back("--minimal");
  for (const Define& d : request.defines) {
    options.push_back(d.value.empty() ? "-D" + d.name : "-D" + d.name + "=" + d.value);
  }
  for (const std::string& o : request.options) options.push_back(o);
  if (request.ptxas_report && !ptx) options.push_back("--ptxas-options=-v");
  return options;
}

CompiledModule nvrtc_compile(const CompileRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  CompiledModule out;
  out.options = nvrtc_options(request);
  out.is_cubin = !request.target.starts_with("compute_");

  // Every embedded header is available to #include "name.cuh". The strings are filled
  // first and only then pointed at, so no pointer outlives a reallocation.
  std::vector<std::string> header_storage;
  for (const EmbeddedSource& src : embedded_sources()) {
    if (!src.name.ends_with(".cuh")) continue;
    header_storage.emplace_back(src.text);
    header_storage.emplace_back(src.name);
  }
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (std::size_t i = 0; i < header_storage.size(); i += 2) {
    header_texts.push_back(header_storage[i].c_str());
    header_names.push_back(header_storage[i + 1].c_str());
  }

  Program program(request.source, request.source_name, header_texts, header_names);
  std::vector<const char*> argv;
  for (const std::string& o : out.options) argv.push_back(o.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  out.log = program_log(program.get());
  if (request.ptxas_report) split_ptxas_report(out.log, out.ptxas_report);
  if (result != NVRTC_SUCCESS) {
    std::string joined;
    for (const std::string& o : out.options) joined += (joined.empty() ? "" : " ") + o;
    fail("NVRTC failed to compile {} for {}: {}\noptions: {}\nlog:\n{}", request.source_name,
         request.target, nvrtcGetErrorString(result), joined, out.log);
  }
  std::size_t size = 0;
  if (out.is_cubin) {
    check_nvrtc(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize");
    out.image.resize(size);
    check_nvrtc(nvrtcGetCUBIN(program.get(), out.image.data()), "nvrtcGetCUBIN");
  } else {
    check_nvrtc(nvrtcGetPTXSize(program.get(), &size), "nvrtcGetPTXSize");
    out.image.resize(size);
    check_nvrtc(nvrtcGetPTX(program.get(), out.image.data()), "nvrtcGetPTX");
  }
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  logger()->debug("compiled {} for {} in {:.1f} ms ({} bytes)", request.source_name,
                  request.target, out.compile_ms, out.image.size());
  // The shipped kernels compile with an empty log, so any warning is news; info is below
  // the default level and would hide it.
  if (!out.log.empty()) logger()->warn("NVRTC log for {}:\n{}", request.source_name, out.log);
  return out;
}

std::vector<std::string> nvrtc_supported_targets() {
  int count = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  std::vector<std::string> out;
  for (int a : archs) out.push_back("sm_" + std::to_string(a));
  return out;
}

NvrtcVersion linked_nvrtc_version() {
  static const NvrtcVersion version = [] {
    NvrtcVersion v;
    check_nvrtc(nvrtcVersion(&v.major, &v.minor), "nvrtcVersion");
    return v;
  }();
  return version;
}

std::string nvrtc_version() {
  const NvrtcVersion v = linked_nvrtc_version();
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

namespace {

// The GNU build ID, in hex, among the ELF notes from `p` to `end`; empty without one.
std::string gnu_build_id(const unsigned char* p, const unsigned char* end) {
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
    const unsigned char* name = p + sizeof(ElfW(Nhdr));
    const unsigned char* desc = name + ((note->n_namesz + 3) & ~3u);
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
        std::memcmp(name, "GNU", 4) == 0 && desc + note->n_descsz <= end) {
      std::string hex;
      for (std::uint32_t b = 0; b < note->n_descsz; ++b) hex += fmt::format("{:02x}", desc[b]);
      return hex;
    }
    p = desc + ((note->n_descsz + 3) & ~3u);
  }
  return {};
}

// The build ID of the loaded object that holds `code`: found in its PT_NOTE segments, in
// memory, so nothing is read from disk.
struct BuildIdSearch {
  std::uintptr_t code = 0;
  std::string hex;  // empty until found
};

int find_build_id(dl_phdr_info* info, std::size_t, void* data) {
  auto& search = *static_cast<BuildIdSearch*>(data);
  const auto segment = [&](int i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const auto* start = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    return std::pair{start, start + ph.p_memsz};
  };
  bool holds_code = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto [start, end] = segment(i);
    const auto* code = reinterpret_cast<const unsigned char*>(search.code);
    holds_code |= info->dlpi_phdr[i].p_type == PT_LOAD && code >= start && code < end;
  }
  if (!holds_code) return 0;
  for (int i = 0; i < info->dlpi_phnum && search.hex.empty(); ++i) {
    if (info->dlpi_phdr[i].p_type != PT_NOTE) continue;
    const auto [start, end] = segment(i);
    search.hex = gnu_build_id(start, end);
  }
  return 1;  // the object that holds the code, with or without a build ID
}

std::string find_nvrtc_library_identity() {
  // The object that holds NVRTC's code (the shared library, or the program itself when
  // NVRTC is linked statically), by its build ID: the same for every copy of one build,
  // so an ahead-of-time cache filled on another machine still hits.
  BuildIdSearch search;
  search.code = reinterpret_cast<std::uintptr_t>(&nvrtcVersion);
  ::dl_iterate_phdr(find_build_id, &search);
  if (!search.hex.empty()) return "build-id " + search.hex;
  logger()->warn("the NVRTC library has no GNU build ID; the kernel cache key holds only its "
                 "version");
  return "unknown";
}

}  // namespace

const std::string& nvrtc_library_identity() {
  static const std::string identity = find_nvrtc_library_identity();
  return identity;
}

}  // namespace metrale
