// The byte-level parts of the kernel cache: SHA-256 against the FIPS 180-4 vectors; the
// key (stable, changed by every input that changes the binary, blind to define order and
// to the sources' paths); the entry format, which names every kind of damage; the compile
// target.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cache_entry.hpp"
#include "metrale/cache_key.hpp"
#include "metrale/compile_target.hpp"
#include "metrale/error.hpp"
#include "metrale/embedded_sources.hpp"
#include "metrale/kernel_variants.hpp"
#include "sha256.hpp"

using namespace metrale;

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;  // fed in uneven pieces to exercise the block buffering
  const std::string piece(997, 'a');
  for (int done = 0; done < 1000000; done += 997) {
    million.update(std::string_view(piece).substr(0, std::min(997, 1000000 - done)));
  }
  CHECK(to_hex(million.finish()) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("the cache key is stable, changes with every input, and ignores paths") {
  const KernelVariant& v = variant_named("w8a16_gemm_m16");
  const CacheKeyInputs base = cache_key_inputs(
      CompileRequest{v.source, embedded_source(v.source), {{"N_TILE", "32"}}, {}, "sm_90"});
  const std::string key = cache_key(base);
  CHECK(key.size() == 64);
  CHECK(cache_key(cache_key_inputs(CompileRequest{v.source, embedded_source(v.source),
                                                  {{"N_TILE", "32"}}, {}, "sm_90"})) == key);
  REQUIRE(!base.headers.empty());

  // The loaded NVRTC as a file: a patch release keeps nvrtcVersion's MAJOR.MINOR.
  CHECK(base.nvrtc_library.starts_with("build-id "));
  CHECK(base.nvrtc_library.size() > 9 + 16);
  CHECK(base.nvrtc_library == nvrtc_library_identity());

  std::vector<CacheKeyInputs> changed(11, base);
  changed[0].defines = {{"N_TILE", "64"}};
  changed[1].defines.push_back({"EXTRA", ""});
  changed[2].target = "sm_100";
  changed[3].target = "compute_90";
  const std::string edited_source = std::string(base.source) + "\n// edit\n";
  changed[4].source = edited_source;
  const std::string edited_header = std::string(base.headers[0].text) + " ";
  changed[5].headers[0].text = edited_header;
  changed[6].nvrtc_version = "99.9";
  changed[7].library_version = "9.9.9";
  changed[8].format_version = kCacheFormatVersion + 1;
  changed[9].options = {"-lineinfo"};
  changed[10].nvrtc_library += " patched";
  std::vector<std::string> keys{key};
  for (const CacheKeyInputs& c : changed) {
    const std::string k = cache_key(c);
    for (const std::string& seen : keys) CHECK(k != seen);
    keys.push_back(k);
  }

  CacheKeyInputs two = base;
  two.defines = {{"A", "1"}, {"B", "2"}};
  CacheKeyInputs swapped = base;
  swapped.defines = {{"B", "2"}, {"A", "1"}};
  CHECK(cache_key(two) == cache_key(swapped));

  CacheKeyInputs absolute = base;
  absolute.source_name = "/opt/checkout-" + std::to_string(::getpid()) + "/" + base.source_name;
  CHECK(cache_key(absolute) == key);
  const std::string material = cache_key_material(absolute);
  CHECK(material.find("/opt/checkout") == std::string::npos);
  const std::string cwd = std::filesystem::current_path().string();
  if (cwd.size() > 1) CHECK(material.find(cwd) == std::string::npos);
}

TEST_CASE("an entry decodes to what was encoded, and every kind of damage is named") {
  const KernelVariant& v = variant_named("w8a16_gemm_m16");
  const std::string key = cache_key(compile_request(v, "sm_90"));
  const std::string image = "FAKE N_TILE=32 payload";
  const std::vector<char> file =
      encode_cache_entry(key, {"sm_90", "w8a16_gemm_m16", true}, std::span(image));
  const DecodedEntry good = decode_cache_entry(file, key);
  REQUIRE(good.ok());
  CHECK(std::string(file.data() + good.payload_offset, good.payload_size) == image);
  CHECK(good.meta.target == "sm_90");
  CHECK(good.meta.label == "w8a16_gemm_m16");
  CHECK(good.meta.is_cubin);

  CHECK(decode_cache_entry({}, key).problem == "empty file");
  CHECK(decode_cache_entry(std::span(file).first(file.size() - 3), key)
            .problem.starts_with("truncated"));
  CHECK(decode_cache_entry(std::span(file).first(20), key).problem.starts_with("truncated"));
  for (std::size_t at : {std::size_t{20}, file.size() - 5}) {
    std::vector<char> flipped = file;
    flipped[at] ^= 0x10;
    CHECK(decode_cache_entry(flipped, key).problem == "checksum mismatch");
  }
  std::vector<char> longer = file;
  longer.push_back('x');
  CHECK(decode_cache_entry(longer, key).problem.starts_with("trailing bytes"));
  CHECK(decode_cache_entry(file, std::string(64, 'a')).problem.find("not the key") !=
        std::string::npos);
  CHECK_THROWS_AS(encode_cache_entry("not-a-key", {}, std::span(image)), Error);
}

TEST_CASE("a cache entry with any one bit flipped, or cut short anywhere, does not decode") {
  const std::string key(64, 'c');
  const std::string image = "an image of a few bytes";
  const std::vector<char> file =
      encode_cache_entry(key, {"sm_90", "w8a16_gemm_m16", true}, std::span(image));
  REQUIRE(decode_cache_entry(file, key).ok());
  std::size_t caught = 0;
  for (std::size_t at = 0; at < file.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<char> flipped = file;
      flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
      // Without the expected key too: the file alone must show the damage.
      const DecodedEntry d = decode_cache_entry(flipped);
      if (!d.ok()) ++caught;
      else FAIL_CHECK("bit ", bit, " of byte ", at, " flipped and the entry still decodes");
    }
  }
  CHECK(caught == 8 * file.size());
  for (std::size_t size = 0; size < file.size(); ++size) {
    CAPTURE(size);
    CHECK_FALSE(decode_cache_entry(std::span(file).first(size)).ok());
  }
}

TEST_CASE("a device newer than NVRTC gets PTX of the newest supported target not newer") {
  const std::vector<std::string> supported{"sm_75", "sm_80", "sm_90", "sm_120"};
  CHECK(choose_compile_target("sm_90", supported).target == "sm_90");
  CHECK_FALSE(choose_compile_target("sm_90", supported).ptx_fallback);
  CHECK(choose_compile_target("sm_130", supported).target == "compute_120");
  CHECK(choose_compile_target("sm_130", supported).ptx_fallback);
  CHECK(choose_compile_target("sm_100", supported).target == "compute_90");
  CHECK(choose_compile_target("not-a-target", supported).target == "not-a-target");
  CHECK_THROWS_AS(choose_compile_target("sm_70", supported), Error);
  CHECK(virtual_target("sm_90") == "compute_90");
}
