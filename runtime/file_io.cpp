#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <random>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace metrale {

namespace {

template <typename... Args>
[[noreturn]] void fail_with(int error, fmt::format_string<Args...> format, Args&&... args) {
  throw FileError(fmt::format(format, std::forward<Args>(args)...), error);
}

// std::random_device throws where it finds no entropy source; the clock's nanoseconds
// still keep apart two processes that share a pid (separate pid namespaces).
std::uint64_t random_bits() {
  try {
    std::random_device entropy;
    return (std::uint64_t{entropy()} << 32) ^ entropy();
  } catch (const std::exception&) {
    return static_cast<std::uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count());
  }
}

// pid + a per-process counter + random bits: unique across processes sharing the
// directory, across threads of one process, and across a pid reused after a crash.
std::string temporary_name(const std::string& name) {
  static std::atomic<std::uint64_t> counter{0};
  return fmt::format(".tmp-{}-{}-{}-{:016x}", name, ::getpid(),
                     counter.fetch_add(1, std::memory_order_relaxed), random_bits());
}

bool same_file(const struct stat& st, std::uint64_t device, std::uint64_t inode) {
  return static_cast<std::uint64_t>(st.st_dev) == device &&
         static_cast<std::uint64_t>(st.st_ino) == inode;
}

// rename(2) that never replaces an existing `to`; returns 0 or the errno (EEXIST: `to`
// exists; EINVAL: the file system cannot rename without replacing).
int rename_no_replace(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return 0;
  }
  return errno;
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
    fail_with(err, "cannot create {}: {}", path, std::generic_category().message(err));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      fail_with(err, "cannot write {}: {}", temp.path().string(),
                std::generic_category().message(err));
    }
    done += static_cast<std::size_t>(n);
  }
  // No fsync: an entry cut short by a crash fails its own validation and is rebuilt, so
  // durability is not worth a disk flush on every compile.
  if (const int err = fd.close(); err != 0) {
    fail_with(err, "cannot write {}: {}", temp.path().string(),
              std::generic_category().message(err));
  }
  const std::filesystem::path target = dir / name;
  if (::rename(temp.path().c_str(), target.c_str()) != 0) {
    const int err = errno;
    fail_with(err, "cannot rename {} to {}: {}", temp.path().string(), target.string(),
              std::generic_category().message(err));
  }
  temp.committed();
}

bool remove_if_same_file(const std::filesystem::path& path, std::uint64_t device,
                         std::uint64_t inode, int* error,
                         const std::function<void()>& before_removal) {
  if (error != nullptr) *error = 0;
  struct stat st {};
  // A first look, so that a name already holding a newer entry is left alone entirely.
  if (::lstat(path.c_str(), &st) != 0 || !same_file(st, device, inode)) return false;
  if (before_removal) before_removal();
  // Another process may rename a newer entry over the name at any moment, so an unlink of
  // `path` could take that one instead. The file is moved to a name of its own first and
  // checked there: what that name holds, nothing else can replace.
  const std::filesystem::path aside =
      path.parent_path() / temporary_name(path.filename().string());
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    // ENOENT: gone since the look, removed by another process, which is what was wanted.
    if (error != nullptr && errno != ENOENT) *error = errno;
    return false;
  }
  if (::lstat(aside.c_str(), &st) == 0 && same_file(st, device, inode)) {
    if (::unlink(aside.c_str()) == 0) return true;
    // ENOENT: a trim in another process took it aside as a stale write (a rename keeps
    // the mtime), which removes it as wanted.
    if (errno == ENOENT) return false;
    if (error != nullptr) *error = errno;
    // Back under its name, but never over a newer entry that arrived meanwhile; failing
    // that it stays aside, where scans see an abandoned write, not an entry.
    rename_no_replace(aside, path);
    return false;
  }
  // A newer entry came between the look and the move: it goes back. A file that took the
  // name since then came later still, an entry of the same key written after this one,
  // so that one stays and this copy goes. Where the file system cannot rename without
  // replacing, replacing is as good: either file is newer than the one to remove.
  const int err = rename_no_replace(aside, path);
  if (err == EEXIST) {
    ::unlink(aside.c_str());
  } else if (err != 0) {
    ::rename(aside.c_str(), path.c_str());
  }
  return false;
}

}  // namespace metrale
