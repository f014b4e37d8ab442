#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>
#include <random>

#include <fmt/format.h>

#include "metrale/error.hpp"

namespace metrale {
namespace {

// pid + a per-process counter + random bits: unique across processes sharing the
// directory, across threads of one process, and across a pid reused after a crash.
std::string temporary_name(const std::string& name) {
  static std::atomic<std::uint64_t> counter{0};
  std::random_device entropy;
  const std::uint64_t random = (std::uint64_t{entropy()} << 32) ^ entropy();
  return fmt::format(".tmp-{}-{}-{}-{:016x}", name, ::getpid(),
                     counter.fetch_add(1, std::memory_order_relaxed), random);
}

// Removes the temporary file unless the rename took it.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::filesystem::path path) : path_(std::move(path)) {}
  ~TemporaryFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void committed() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

int UniqueFd::close() {
  if (fd_ < 0) return 0;
  const int rc = ::close(release());
  return rc == 0 ? 0 : errno;
}

void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(release());
}

FileRead read_whole_file(const std::filesystem::path& path) {
  FileRead out;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    out.error = errno;
    return out;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    out.error = errno;
    return out;
  }
  out.device = static_cast<std::uint64_t>(st.st_dev);
  out.inode = static_cast<std::uint64_t>(st.st_ino);
  out.bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  // Read to end of file rather than trusting st_size alone; the fd keeps the inode that
  // was opened even if another process renames a new entry over the name meanwhile.
  for (;;) {
    if (done == out.bytes.size()) out.bytes.resize(done + 4096);
    const ssize_t n = ::read(fd.get(), out.bytes.data() + done, out.bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = errno;
      out.bytes.clear();
      return out;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.bytes.resize(done);
  return out;
}

void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           std::span<const char> bytes) {
  TemporaryFile temp(dir / temporary_name(name));
  UniqueFd fd(::open(temp.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd) {
    const int err = errno;
    const std::string path = temp.path().string();  // committed() forgets it
    temp.committed();                               // nothing was created
    fail("cannot create {}: {}", path, std::generic_category().message(err));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      fail("cannot write {}: {}", temp.path().string(), std::generic_category().message(err));
    }
    done += static_cast<std::size_t>(n);
  }
  // No fsync: an entry cut short by a crash fails its own validation and is rebuilt, so
  // durability is not worth a disk flush on every compile.
  if (const int err = fd.close(); err != 0) {
    fail("cannot write {}: {}", temp.path().string(), std::generic_category().message(err));
  }
  const std::filesystem::path target = dir / name;
  if (::rename(temp.path().c_str(), target.c_str()) != 0) {
    const int err = errno;
    fail("cannot rename {} to {}: {}", temp.path().string(), target.string(),
         std::generic_category().message(err));
  }
  temp.committed();
}

bool remove_if_same_file(const std::filesystem::path& path, std::uint64_t device,
                         std::uint64_t inode, int* error) {
  if (error != nullptr) *error = 0;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (static_cast<std::uint64_t>(st.st_dev) != device ||
      static_cast<std::uint64_t>(st.st_ino) != inode) {
    return false;
  }
  if (::unlink(path.c_str()) == 0) return true;
  // Gone since the lstat: another process removed it, which is what was wanted.
  if (error != nullptr && errno != ENOENT) *error = errno;
  return false;
}

}  // namespace metrale
