#pragma once
// Files the user names on the command line.
//
// Inputs (models, external data, tensors, traces, record files): only a regular file is read. A
// FIFO would block the open or the read forever, a device such as /dev/zero never ends, a
// directory has no bytes. The type is checked on a non-blocking descriptor before anything is
// read, and reads stop at the size the file had when opened.
//
// Outputs (every -o / --out): a regular file, or a missing one, is written to a temporary file
// in the same folder and renamed into place, so a reader never sees half a file; the replaced
// file's permissions carry over. A read-only file (no write permission for anyone, or none for
// this process) is refused, never replaced by the rename, which the folder's permissions alone
// would allow. An existing character device or FIFO (/dev/stdout, /dev/null, a pipe) is written
// through, never replaced; anything else that is not a regular file (a directory) is refused.
// The folder must exist: footprint creates none (DESIGN.md: the same rule for every -o). Errors
// carry errno's text. A command also refuses an output that is one of its own inputs
// (refuse_overwriting), before it does any work.
//
//   const RegularFile f = RegularFile::open("trace.json");   // Error: "trace.json: a FIFO, ..."
//   std::string text = read_text_file("records.jsonl");
//   write_output_file("plan.csv", [&](std::ostream& out) { out << csv; });
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace footprint {

class RegularFile {
 public:
  // Throws footprint::Error "<path>: <what it is>, not a regular file" or "<path>: cannot open:
  // <errno text>".
  static RegularFile open(const std::filesystem::path& path);
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  uint64_t size_ = 0;
};

// For a file a library opens itself (a SQLite database): false when `path` does not exist, true
// for a regular file, and the same Error as RegularFile::open for anything else. Only stat() is
// called, so a FIFO cannot block it.
bool regular_file_exists(const std::filesystem::path& path);

// The whole of a regular file (as RegularFile::open checks it), at most its size when opened.
std::string read_text_file(const std::filesystem::path& path);
std::vector<std::byte> read_file_bytes(const std::filesystem::path& path);

// `write` fills the stream; see above for what `path` may be. An exception from `write` leaves an
// existing file as it was.
void write_output_file(const std::filesystem::path& path,
                       const std::function<void(std::ostream&)>& write);
// Appends `text` (JSONL records): the same checks, without the rename.
void append_output_file(const std::filesystem::path& path, std::string_view text);

// Whether `path` may be written as above: nothing when it does not exist, is a writable regular
// file, or a device or FIFO; the Error write_output_file would throw otherwise (for a file a
// library writes itself: a SQLite database).
void check_writable(const std::filesystem::path& path);

// A file a command reads, and what it is to the command ("the model", "the reference output").
struct InputFile {
  std::filesystem::path path;
  std::string_view what;
};
// What a command checks of an output before it does any work: a UsageError when `output` is one
// of `inputs` (the same file by device and inode, so another spelling, a hard link or a symbolic
// link to it is caught too; files that do not exist never match), then check_writable's Error
// when it may not be written. `flag` names the option the output came from ("-o").
//
//   refuse_overwriting(o.output, {{o.model, "the model"}}, "-o");
//   // footprint: error: -o m.onnx: that is the model this command reads; write elsewhere
void refuse_overwriting(const std::filesystem::path& output, std::span<const InputFile> inputs,
                        std::string_view flag);

}  // namespace footprint
