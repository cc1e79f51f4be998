#include "footprint/plan/buffer_csv.hpp"

#include <array>
#include <charconv>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/plan/lower_bound.hpp"

namespace footprint::plan {
namespace {

enum class Column { id, lower, upper, size, alignment, fixed_offset, ignored };

constexpr std::array<std::pair<std::string_view, Column>, 7> kColumns{{
    {"id", Column::id},
    {"lower", Column::lower},
    {"upper", Column::upper},
    {"size", Column::size},
    {"alignment", Column::alignment},
    {"fixed_offset", Column::fixed_offset},
    {"offset", Column::ignored},  // a plan read back in: it is planned again
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// Reads the text line by line and says where it is when something is wrong.
class CsvReader {
 public:
  CsvReader(std::string_view text, std::string_view source) : text_(text), source_(source) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // UTF-8 byte order mark
  }

  // The next line that is not blank, or nullopt at the end.
  std::optional<std::string_view> next_line() {
    while (pos_ < text_.size()) {
      const size_t nl = text_.find('\n', pos_);
      const size_t end = nl == std::string_view::npos ? text_.size() : nl;
      std::string_view line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_number_;
      if (!trim(line).empty()) return line;
    }
    return std::nullopt;
  }

  [[noreturn]] void fail(const std::string& what) const {
    const size_t line = line_number_ == 0 ? 1 : line_number_;
    throw Error(std::string(source_) + ":" + std::to_string(line) + ": " + what);
  }
  [[noreturn]] void fail_field(size_t column, std::string_view name,
                               const std::string& what) const {
    fail("column " + std::to_string(column + 1) + " (" + printable(name) + "): " + what);
  }
  size_t line_number() const { return line_number_; }

 private:
  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  size_t line_number_ = 0;
};

struct Header {
  std::vector<Column> columns;  // one per field of every line
  std::vector<std::string_view> names;
};

Header parse_header(CsvReader& reader) {
  const auto line = reader.next_line();
  if (!line) {
    reader.fail("empty file: expected the header line 'id,lower,upper,size'");
  }
  Header h;
  std::array<bool, kColumns.size()> seen{};
  for (std::string_view name : split_fields(*line)) {
    const size_t column = h.columns.size();
    size_t k = 0;
    while (k < kColumns.size() && kColumns[k].first != name) ++k;
    if (k == kColumns.size()) {
      reader.fail_field(column, name,
                        "unknown column: expected id, lower, upper, size and optionally "
                        "alignment, fixed_offset (offset is ignored)");
    }
    if (seen[k]) reader.fail_field(column, name, "column appears twice");
    seen[k] = true;
    h.columns.push_back(kColumns[k].second);
    h.names.push_back(name);
  }
  for (size_t k = 0; k < 4; ++k) {
    if (!seen[k]) {
      reader.fail("header has no '" + std::string(kColumns[k].first) +
                  "' column: expected 'id,lower,upper,size'");
    }
  }
  return h;
}

// What check_buffers() accepts: far enough from overflow for every sum a planner makes.
constexpr int64_t kLimit = int64_t{1} << 60;

int64_t parse_integer(const CsvReader& reader, size_t column, std::string_view name,
                      std::string_view field, int64_t min) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
    reader.fail_field(column, name,
                      "expected an integer, got " + in_quotes(field) +
                          (ec == std::errc::result_out_of_range ? " (out of range)" : ""));
  }
  if (value < min || value > kLimit) {
    reader.fail_field(column, name,
                      "expected an integer in [" +
                          (min == -kLimit ? "-2^60" : std::to_string(min)) + ", 2^60], got " +
                          std::to_string(value));
  }
  return value;
}

Buffer parse_row(const CsvReader& reader, const Header& h, std::string_view line) {
  const auto fields = split_fields(line);
  if (fields.size() != h.columns.size()) {
    reader.fail("expected " + std::to_string(h.columns.size()) + " fields, got " +
                std::to_string(fields.size()));
  }
  Buffer b;
  for (size_t c = 0; c < fields.size(); ++c) {
    const std::string_view f = fields[c];
    const std::string_view name = h.names[c];
    switch (h.columns[c]) {
      case Column::id:
        if (f.empty()) reader.fail_field(c, name, "empty id");
        b.id = std::string(f);
        break;
      case Column::lower:
        b.lower = parse_integer(reader, c, name, f, -kLimit);
        break;
      case Column::upper:
        b.upper = parse_integer(reader, c, name, f, -kLimit);
        break;
      case Column::size:
        b.size = parse_integer(reader, c, name, f, 0);
        break;
      case Column::alignment:
        b.alignment = f.empty() ? 1 : parse_integer(reader, c, name, f, 1);
        break;
      case Column::fixed_offset:
        if (!f.empty()) b.fixed_offset = parse_integer(reader, c, name, f, 0);
        break;
      case Column::ignored:
        break;
    }
  }
  if (b.upper <= b.lower) {
    size_t c = 0;
    while (h.columns[c] != Column::upper) ++c;
    reader.fail_field(c, "upper",
                      "expected upper > lower (lifetimes are half-open [lower, upper)), got " +
                          std::to_string(b.lower) + ", " + std::to_string(b.upper));
  }
  if (b.fixed_offset && *b.fixed_offset % b.alignment != 0) {
    size_t c = 0;
    while (h.columns[c] != Column::fixed_offset) ++c;
    reader.fail_field(c, "fixed_offset",
                      std::to_string(*b.fixed_offset) + " is not a multiple of the alignment " +
                          std::to_string(b.alignment));
  }
  return b;
}

}  // namespace

std::vector<Buffer> parse_buffers_csv(std::string_view text, std::string_view source) {
  CsvReader reader(text, source);
  const Header header = parse_header(reader);
  std::vector<Buffer> buffers;
  std::vector<size_t> lines;
  std::unordered_map<std::string, size_t> line_of_id;
  while (const auto line = reader.next_line()) {
    Buffer b = parse_row(reader, header, *line);
    const auto [it, fresh] = line_of_id.emplace(b.id, reader.line_number());
    if (!fresh) {
      reader.fail("id " + in_quotes(b.id) + " appears again (first on line " +
                  std::to_string(it->second) + ")");
    }
    buffers.push_back(std::move(b));
    lines.push_back(reader.line_number());
  }
  // Each field is bounded, their sums are not: sizes live at one time that add up beyond int64
  // leave no plan possible, and the row that tips the sum over is named.
  if (const auto o = live_overflow(buffers)) {
    const Buffer& b = buffers[o->buffer];
    throw SizeOverflow(std::string(source) + ":" + std::to_string(lines[o->buffer]) + ": id " +
                       in_quotes(b.id) + ": the sizes live at time " + std::to_string(o->time) +
                       " add up beyond int64 (" + std::to_string(o->live_before) + " + " +
                       std::to_string(b.size) + "): no arena can hold them");
  }
  return buffers;
}

std::vector<Buffer> read_buffers_csv(const std::filesystem::path& path) {
  return parse_buffers_csv(read_text_file(path), path.string());
}

std::string format_plan_csv(std::span<const Buffer> buffers, std::span<const int64_t> offsets) {
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    out += b.id + ',' + std::to_string(b.lower) + ',' + std::to_string(b.upper) + ',' +
           std::to_string(b.size) + ',' + std::to_string(offsets[i]) + '\n';
  }
  return out;
}

void write_plan_csv(const std::filesystem::path& path, std::span<const Buffer> buffers,
                    std::span<const int64_t> offsets) {
  const std::string text = format_plan_csv(buffers, offsets);
  write_output_file(path, [&](std::ostream& out) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
}

}  // namespace footprint::plan
