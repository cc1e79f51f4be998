#include "footprint/core/user_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <optional>
#include <random>
#include <utility>

#include "footprint/core/error.hpp"

namespace footprint {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

RegularFile RegularFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It changes nothing
  // for a regular file, which is all that is read past the fstat below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  RegularFile f(fd, 0);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(path.string() + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    throw Error(path.string() + ": " + kind_of(st.st_mode) + ", not a regular file");
  }
  f.size_ = static_cast<uint64_t>(st.st_size);
  return f;
}

bool regular_file_exists(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    throw Error(path.string() + ": cannot stat: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(path.string() + ": " + kind_of(st.st_mode) + ", not a regular file");
  }
  return true;
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(std::exchange(other.size_, 0)) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

template <class Bytes>
Bytes read_whole(const std::filesystem::path& path) {
  const RegularFile f = RegularFile::open(path);
  Bytes out(f.size(), {});
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(f.fd(), out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;  // the file shrank since it was opened
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  return read_whole<std::string>(path);
}

std::vector<std::byte> read_file_bytes(const std::filesystem::path& path) {
  return read_whole<std::vector<std::byte>>(path);
}

namespace {

// A descriptor as an ostream (libstdc++'s stdio_filebuf), closed with it.
class FdStream {
 public:
  explicit FdStream(int fd) : buf_(fd, std::ios::out | std::ios::binary), out_(&buf_) {}
  std::ostream& stream() { return out_; }
  // Flushes and closes; false with errno set when a write or the close failed.
  bool finish() {
    out_.flush();
    const bool ok = static_cast<bool>(out_);
    const int saved = errno;
    const bool closed = buf_.close() != nullptr;
    if (!ok) errno = saved;
    return ok && closed;
  }

 private:
  __gnu_cxx::stdio_filebuf<char> buf_;
  std::ostream out_;
};

[[noreturn]] void fail_errno(const std::filesystem::path& path, const char* what) {
  throw Error(path.string() + ": " + what + ": " + std::strerror(errno));
}

// What `path` is now: nullopt when it does not exist (its folder must, and is checked).
std::optional<mode_t> existing_type(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode;
  if (errno != ENOENT) fail_errno(path, "cannot write");
  const std::filesystem::path folder =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
    throw Error(path.string() + ": cannot write: the folder " + folder.string() +
                " does not exist (footprint creates no folders)");
  }
  return std::nullopt;
}

// The open flags for writing through a device or FIFO; refuses every other non-regular file,
// and a regular file this process may not write (or nobody may: root's access() says yes to a
// file its owner made read-only, and the rename would replace it).
void check_writable_type(const std::filesystem::path& path, mode_t mode) {
  if (S_ISREG(mode)) {
    constexpr mode_t kAnyWrite = S_IWUSR | S_IWGRP | S_IWOTH;
    if ((mode & kAnyWrite) == 0 || ::access(path.c_str(), W_OK) != 0) {
      throw Error(path.string() +
                  ": cannot write: the file is read-only (footprint replaces no file it may not "
                  "write; make it writable or write elsewhere)");
    }
    return;
  }
  if (S_ISCHR(mode) || S_ISFIFO(mode)) return;
  throw Error(path.string() + ": cannot write: it is " + kind_of(mode) +
              "; -o takes a regular file, a new one, or a character device or FIFO");
}

// Opens an existing device or FIFO for writing without blocking (a FIFO with no reader is an
// error, not a hang), then makes the descriptor blocking again for the writes.
int open_through(const std::filesystem::path& path, int extra_flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra_flags);
  if (fd < 0 && errno == ENXIO) throw Error(path.string() + ": cannot write: a FIFO nobody reads");
  if (fd < 0) fail_errno(path, "cannot open for writing");
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    ::close(fd);
    fail_errno(path, "cannot open for writing");
  }
  return fd;
}

void write_fd(const std::filesystem::path& path, int fd,
              const std::function<void(std::ostream&)>& write) {
  FdStream out(fd);
  write(out.stream());
  if (!out.finish()) fail_errno(path, "write failed");
}

}  // namespace

void write_output_file(const std::filesystem::path& path,
                       const std::function<void(std::ostream&)>& write) {
  const std::optional<mode_t> type = existing_type(path);
  if (type) check_writable_type(path, *type);
  if (type && !S_ISREG(*type)) {
    write_fd(path, open_through(path, 0), write);
    return;
  }
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(std::random_device{}());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail_errno(path, "cannot create a temporary file beside it");
  try {
    // The file it replaces keeps its permissions (a new one gets 0666 less the umask).
    if (type && ::fchmod(fd, *type & 07777) != 0) fail_errno(path, "cannot set permissions");
    write_fd(path, fd, write);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail_errno(path, "cannot rename the written file into place");
  }
}

void append_output_file(const std::filesystem::path& path, std::string_view text) {
  const std::optional<mode_t> type = existing_type(path);
  if (type) check_writable_type(path, *type);
  const int fd = type && !S_ISREG(*type)
                     ? open_through(path, O_APPEND)
                     : ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) fail_errno(path, "cannot open for appending");
  write_fd(path, fd, [&](std::ostream& out) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
}

void check_writable(const std::filesystem::path& path) {
  if (const std::optional<mode_t> type = existing_type(path)) check_writable_type(path, *type);
}

void refuse_overwriting(const std::filesystem::path& output, std::span<const InputFile> inputs,
                        std::string_view flag) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) {
    check_writable(output);  // a new file is nobody's input; its folder must exist
    return;
  }
  for (const InputFile& in : inputs) {
    struct stat st {};
    if (in.path.empty() || ::stat(in.path.c_str(), &st) != 0) continue;
    if (st.st_dev != out.st_dev || st.st_ino != out.st_ino) continue;
    std::string same = in.path == output ? "" : " (" + in.path.string() + ")";
    throw UsageError(std::string(flag) + " " + output.string() + ": that is " +
                     std::string(in.what) + same +
                     " this command reads; footprint never writes over its input, write "
                     "elsewhere");
  }
  check_writable(output);
}

}  // namespace footprint
