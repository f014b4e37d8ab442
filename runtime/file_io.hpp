// POSIX file helpers for the kernel cache: an owning file descriptor, a whole-file read
// that remembers which file it read, and an atomic write (temporary file + rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace metrale {

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
// temporary file is removed on every failure. Throws Error naming the path and errno.
void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           std::span<const char> bytes);

// Unlinks `path` only if it is still the file (device, inode); true if it removed it.
// Where `error` is given it gets the errno of an unlink that failed on the same file
// (e.g. EACCES), else 0: a file gone or replaced meanwhile is not an error.
bool remove_if_same_file(const std::filesystem::path& path, std::uint64_t device,
                         std::uint64_t inode, int* error = nullptr);

}  // namespace metrale
