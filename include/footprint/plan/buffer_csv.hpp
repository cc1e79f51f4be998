#pragma once
// MiniMalloc's CSV format: `id,lower,upper,size` in, `id,lower,upper,size,offset` out.
//
// Columns are found by their header names, in any order. Two optional input columns extend the
// format: `alignment` and `fixed_offset`. An `offset` column (a plan read back) is ignored, so a
// plan can be planned again. Any other column, a missing field, or a field that is not an integer
// in range is an error naming the file, line and column.
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan {

// `source` names the text in error messages (a path, usually).
std::vector<Buffer> parse_buffers_csv(std::string_view text, std::string_view source);
// Reads only a regular file (read_text_file in core/user_files.hpp: a FIFO or device is an
// error, not a hang).
std::vector<Buffer> read_buffers_csv(const std::filesystem::path& path);

std::string format_plan_csv(std::span<const Buffer> buffers, std::span<const int64_t> offsets);
// Writes as every -o does (write_output_file): a temporary file renamed into place, or through
// an existing device or FIFO, never replacing it.
void write_plan_csv(const std::filesystem::path& path, std::span<const Buffer> buffers,
                    std::span<const int64_t> offsets);

}  // namespace footprint::plan
