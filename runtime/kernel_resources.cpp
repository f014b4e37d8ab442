#include "metrale/kernel_resources.hpp"

#include <charconv>
#include <optional>

#include "metrale/error.hpp"
#include "metrale/nvrtc_compiler.hpp"
#include "text_lines.hpp"

namespace metrale {
namespace {

// The number that ends just before `suffix` in `text` ("..., 0 bytes spill stores" with
// suffix " bytes spill stores" gives 0); none where either is missing.
std::optional<int> number_before(std::string_view text, std::string_view suffix) {
  const std::size_t at = text.find(suffix);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t begin = at;
  while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data() + begin, text.data() + at, value);
  if (ec != std::errc() || end != text.data() + at) return std::nullopt;
  return value;
}

// The number that starts just after `prefix` in `text`; none where either is missing.
std::optional<int> number_after(std::string_view text, std::string_view prefix) {
  const std::size_t at = text.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  const char* first = text.data() + at + prefix.size();
  int value = 0;
  const auto [end, ec] = std::from_chars(first, text.data() + text.size(), value);
  if (ec != std::errc() || end == first) return std::nullopt;
  return value;
}

// The name quoted right at `from` ('NAME'), or empty.
std::string_view quoted_at(std::string_view line, std::size_t from) {
  if (from >= line.size() || line[from] != '\'') return {};
  const std::size_t close = line.find('\'', from + 1);
  if (close == std::string_view::npos) return {};
  return line.substr(from + 1, close - from - 1);
}

}  // namespace

std::vector<KernelResources> parse_ptxas_report(std::string_view report) {
  // Per entry ptxas prints "Compiling entry function 'NAME' for 'sm_XY'", then
  // "Function properties for NAME" and its stack and spill line (a function it calls gets
  // the same pair), then "Used N registers, ...".
  std::vector<KernelResources> out;
  bool in_entry = false;         // between an entry's first line and its register line
  bool have_properties = false;  // the entry's own stack and spill line has been read
  std::string properties_of;     // the function the next "." line describes
  for_each_line(report, [&](std::string_view line) {
    constexpr std::string_view kEntry = "Compiling entry function ";
    constexpr std::string_view kProperties = "Function properties for ";
    if (const std::size_t at = line.find(kEntry); at != line.npos) {
      if (in_entry) fail("ptxas report: no register line for {}", out.back().symbol);
      const std::string_view name = quoted_at(line, at + kEntry.size());
      ensure(!name.empty(), "ptxas report: no entry name in \"{}\"", line);
      out.push_back(KernelResources{std::string(name)});
      have_properties = false;
      in_entry = true;
    } else if (const std::size_t p = line.find(kProperties); p != line.npos) {
      properties_of = std::string(line.substr(p + kProperties.size()));
    } else if (line.find("bytes stack frame") != line.npos) {
      if (!in_entry || properties_of != out.back().symbol) return;  // a callee's line
      const auto frame = number_before(line, " bytes stack frame");
      const auto stores = number_before(line, " bytes spill stores");
      const auto loads = number_before(line, " bytes spill loads");
      ensure(frame && stores && loads, "ptxas report: unreadable properties of {}: \"{}\"",
             properties_of, line);
      out.back().stack_frame_bytes = *frame;
      out.back().spill_store_bytes = *stores;
      out.back().spill_load_bytes = *loads;
      have_properties = true;
    } else if (line.find("Used ") != line.npos && line.find(" registers") != line.npos) {
      ensure(in_entry, "ptxas report: a register line outside an entry: \"{}\"", line);
      const auto registers = number_after(line, "Used ");
      ensure(registers.has_value(), "ptxas report: unreadable register line \"{}\"", line);
      out.back().registers = *registers;
      out.back().barriers = number_after(line, "used ").value_or(0);
      out.back().shared_bytes = number_before(line, " bytes smem").value_or(0);
      ensure(have_properties, "ptxas report: no stack and spill line for {}",
             out.back().symbol);
      in_entry = false;
    }
  });
  if (in_entry) fail("ptxas report: no register line for {}", out.back().symbol);
  return out;
}

std::vector<KernelResources> kernel_resources(const KernelVariant& build,
                                              const std::string& target) {
  const CompileRequest request = compile_request(build, normalize_target(target), true);
  return parse_ptxas_report(nvrtc_compile(request).ptxas_report);
}

}  // namespace metrale
