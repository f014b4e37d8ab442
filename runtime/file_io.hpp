// POSIX file helpers for the kernel cache: an owning file descriptor, a whole-file read
// that remembers which file it read, and an atomic write (temporary file + rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "metrale/error.hpp"

namespace metrale {

// An Error from a file operation, with the errno that caused it, for callers whose
// handling depends on the cause (a missing directory, a refused write, a full disk).
class FileError : public Error {
 public:
  FileError(const std::string& message, int error) : Error(message), error_(error) {}
  int error() const { return error_; }

 private:
  int error_;
};

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes now; returns the errno of a failed close, or 0.
  int close();
  void reset() noexcept;

 private:
  int fd_ = -1;
};

struct FileRead {
  std::vector<char> bytes;
  int error = 0;  // errno of the failed open or read (ENOENT: no such entry)
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

FileRead read_whole_file(const std::filesystem::path& path);

// Writes `bytes` to `dir/name` through a uniquely named temporary file in `dir` that is
// renamed over the target, so readers see the old file or the whole new one. The
// temporary file is removed on every failure. Throws FileError naming the path, with the
// errno.
void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           std::span<const char> bytes);

// Unlinks `path` only if it is still the file (device, inode); true if it removed it.
// A newer file renamed over the name meanwhile is left in place, even one that arrives
// while the removal runs. Where `error` is given it gets the errno of a removal that
// failed on the same file (e.g. EACCES), else 0: a file gone or replaced meanwhile is not
// an error. `before_removal` (tests) runs once the expected file is found under the name
// and before it is taken away: the moment another process may rename a newer one there.
bool remove_if_same_file(const std::filesystem::path& path, std::uint64_t device,
                         std::uint64_t inode, int* error = nullptr,
                         const std::function<void()>& before_removal = {});

}  // namespace metrale
